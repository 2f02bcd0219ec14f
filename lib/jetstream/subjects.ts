// Where each record lives on the cluster's stream: one subject per identifier, jobs and rules
// in separate trees (`<cluster>.j.<token>`, `<cluster>.r.<token>`), so that the stream's
// "last message per subject" retention keeps exactly the last state of each job and rule.
//
// Identifiers may hold `.` (a subject's token separator), may end with one, and are up to
// 1024 bytes of [A-Za-z0-9._:-]. The token escapes the two characters that cannot stand as is,
// `_` first so the mapping stays reversible: `_` -> `__`, `.` -> `_d`. The longest token is
// 2048 bytes, well inside NATS's 4096-byte control line. A cluster name is one token itself
// (lib/domain/cluster-name.ts).

export function encodeToken(id: string): string {
  return id.replaceAll('_', '__').replaceAll('.', '_d');
}

export function decodeToken(token: string): string {
  return token.replace(/_(.)/g, (_m, c: string) => (c === 'd' ? '.' : c));
}

export interface ClusterSubjects {
  readonly stream: string;
  /** Every subject of the stream (its configuration). */
  readonly all: string;
  job(id: string): string;
  rule(id: string): string;
}

export function clusterSubjects(cluster: string): ClusterSubjects {
  return {
    stream: cluster,
    all: `${cluster}.>`,
    job: (id) => `${cluster}.j.${encodeToken(id)}`,
    rule: (id) => `${cluster}.r.${encodeToken(id)}`,
  };
}
