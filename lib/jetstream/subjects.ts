// Where each record lives on the cluster's stream: one subject per identifier, jobs, rules and
// schedules in separate trees (`<cluster>.j.<token>`, `<cluster>.r.<token>`,
// `<cluster>.s.<token>`), so that the stream's "last message per subject" retention keeps
// exactly the last state of each; the format mark on `<cluster>.f`.
//
// Identifiers may hold `.` (a subject's token separator), may end with one, and are up to
// 1024 bytes of [A-Za-z0-9._:-]. The token escapes the two characters that cannot stand as is,
// `_` first so the mapping stays reversible: `_` -> `__`, `.` -> `_d`. The longest token is
// 2048 bytes, well inside NATS's 4096-byte control line. A cluster name is one token itself
// (lib/domain/cluster-name.ts).

import type { LogRecord } from '../engine/journal.ts';

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
  schedule(id: string): string;
  /** Where the format mark lives (lib/domain/format.ts): one subject, so the stream keeps the latest. */
  readonly format: string;
  /** The subject of a record. */
  of(rec: LogRecord): string;
}

export function clusterSubjects(cluster: string): ClusterSubjects {
  const job = (id: string): string => `${cluster}.j.${encodeToken(id)}`;
  const rule = (id: string): string => `${cluster}.r.${encodeToken(id)}`;
  const schedule = (id: string): string => `${cluster}.s.${encodeToken(id)}`;
  const format = `${cluster}.f`;
  return {
    stream: cluster, all: `${cluster}.>`, job, rule, schedule, format,
    of: (rec) => {
      switch (rec.t) {
        case 'job': return job(rec.job.id);
        case 'rule': return rule(rec.rule.id);
        case 'job.removed': return job(rec.id);
        case 'rule.removed': return rule(rec.id);
        case 'format': return format;
        case 'schedule': return schedule(rec.state.schedule.id);
        case 'schedule.removed': return schedule(rec.id);
      }
    },
  };
}
