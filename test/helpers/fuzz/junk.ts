// What the cluster fuzzer publishes (test/integration/cluster-fuzz.test.ts), one message at a
// time, for each place tickd reads: the stream, the checkpoint stream, the forwarding subject,
// the nodes bucket and the lease bucket. Random bytes, truncated and byte-flipped copies of
// real messages, real messages replayed onto their own and other subjects, and records, heads,
// batches and reports it would like taken: unsealed, sealed with another secret, or sealed
// with this one's for another cluster. Nothing here is sealed with the cluster's own secret.
import { serialize } from 'node:v8';
import type { Command } from '../../../lib/domain/command.ts';
import type { LogRecord } from '../../../lib/engine/journal.ts';
import { sealHead, type CheckpointHead } from '../../../lib/jetstream/checkpoint.ts';
import type { ClusterKeys } from '../../../lib/jetstream/cluster-keys.ts';
import { sealRequest } from '../../../lib/jetstream/forward-seal.ts';
import { SEAL_BYTES, sealRecord } from '../../../lib/jetstream/record-seal.ts';
import { encodeToken } from '../../../lib/jetstream/subjects.ts';
import { encodeRecord } from '../../../lib/logfile/codec.ts';
import { testKeys } from '../cluster-secret.ts';
import type { Rng } from './choices.ts';
import { bare, cp, NAME, NODES, OTHER_CLUSTER, otherKeys, subjects } from './target.ts';

/** Distinct keys the fuzzer writes in the nodes bucket at most. */
const MEMBER_KEYS = 300;

/** What the fuzzer copies: real messages of the cluster, refreshed as it goes. */
export interface Real {
  records: Array<{ subject: string; seq: number; data: Uint8Array }>;
  heads: Array<{ data: Uint8Array; head: CheckpointHead }>;
  chunks: Array<{ subject: string; data: Uint8Array }>;
  reports: Array<{ key: string; data: Uint8Array }>;
  lease: Uint8Array | null;
  requests: Array<{ data: Uint8Array; at: number }>;
  /** Runs, censuses and results the nodes sent each other (lib/placement/), overheard. */
  placement: Array<{ subject: string; data: Uint8Array; at: number }>;
}

/** What the makers aim at: the choices, the real messages to copy, the live identifiers. */
export interface Aim {
  readonly rng: Rng;
  readonly real: Real;
  /** Identifiers of acknowledged jobs. */
  readonly acked: () => string[];
  /** The file the fuzzer's shell rule would create, should it ever run. */
  readonly marker: string;
  /** The last stream sequence the fuzzer saw its messages land at: what it seals records for. */
  readonly lastSeq: () => number;
}

export interface Junk {
  readonly what: string;
  readonly subject: string;
  readonly body: Uint8Array;
}

/** A subject of the stream: a new identifier's, a live one's, or none of tickd's shapes. */
function streamSubject(a: Aim): string {
  const { rng } = a;
  const ids = a.acked();
  switch (rng.int(0, 5)) {
    case 0: return subjects.job(`evil.${rng.token()}`);
    case 1: return `${NAME}.j.${rng.token()}`;
    case 2: return `${NAME}.r.${rng.token()}`;
    case 3: return `${NAME}.${rng.token(8)}.${rng.token(8)}`;
    case 4: return ids.length > 0 ? subjects.job(rng.pick(ids)) : `${NAME}.${rng.token()}`;
    default: return rng.pick([subjects.rule('f.'), `${NAME}.j.${encodeToken('w.fz-a.0')}_`, `${NAME}.${rng.token()}`]);
  }
}

/** A record the fuzzer would like applied: its shell rule, its jobs, the removal or change of real ones. */
function evilRecord(a: Aim): { rec: LogRecord; subject: string } {
  const { rng } = a;
  const ids = a.acked();
  const real = ids.length > 0 ? rng.pick(ids) : 'w.fz-a.0';
  switch (rng.int(0, 4)) {
    case 0: return { rec: { t: 'rule', rule: { id: 'evil.', pattern: 'evil.', runner: { type: 'shell', command: `touch ${a.marker}` } } }, subject: subjects.rule('evil.') };
    case 1: {
      const id = `evil.${rng.token(10)}`;
      return { rec: { t: 'job', job: { id, execution: 1n, status: 'planned' } }, subject: subjects.job(id) };
    }
    case 2: return { rec: { t: 'job.removed', id: real }, subject: subjects.job(real) };
    case 3: return { rec: { t: 'rule.removed', id: 'f.' }, subject: subjects.rule('f.') };
    default: return { rec: { t: 'job', job: { id: real, execution: 5n, status: 'planned' } }, subject: subjects.job(real) };
  }
}

/** A message for the stream. */
export function streamJunk(a: Aim): Junk {
  const { rng } = a;
  const records = a.real.records;
  const r = records.length > 0 ? rng.pick(records) : null;
  const random = (): Junk => ({ what: 'stream: random bytes', subject: streamSubject(a), body: rng.bytes(rng.int(0, 2000)) });
  switch (rng.int(0, 9)) {
    case 0: case 1: return random();
    case 2: if (r !== null) return { what: 'stream: truncated record', subject: rng.chance(0.5) ? r.subject : streamSubject(a), body: rng.truncated(r.data) }; break;
    case 3: if (r !== null) return { what: 'stream: byte-flipped record', subject: rng.chance(0.5) ? r.subject : streamSubject(a), body: rng.flipped(r.data) }; break;
    case 4: if (r !== null) return { what: 'stream: record replayed onto its subject', subject: r.subject, body: r.data }; break;
    case 5: if (r !== null) return { what: 'stream: record replayed onto another subject', subject: streamSubject(a), body: r.data }; break;
    case 6: {
      // Sealed with another cluster's secret, for the sequence it lands at.
      const e = evilRecord(a);
      const payload = r !== null && rng.chance(0.3) ? Buffer.from(r.data).subarray(SEAL_BYTES) : bare(e.rec);
      return { what: 'stream: sealed with another secret', subject: e.subject, body: sealRecord(otherKeys, NAME, e.subject, a.lastSeq() + 1, payload) };
    }
    case 7: {
      // What a cluster sharing the secret wrote to its own stream, copied here.
      const e = evilRecord(a);
      return { what: 'stream: another cluster\'s record', subject: e.subject, body: sealRecord(testKeys, OTHER_CLUSTER, e.subject, a.lastSeq() + 1, bare(e.rec)) };
    }
    case 8: {
      // What an older tickd wrote, or anyone who read doc/logfile-format.md: a bare payload.
      const e = evilRecord(a);
      return { what: 'stream: unsealed record', subject: e.subject, body: bare(e.rec) };
    }
    default: break;
  }
  return random();
}

/**
 * A message for the checkpoint stream. With `spare`, the real checkpoint (its head and chunks)
 * is left readable: what would replace them goes beside them.
 */
export function checkpointJunk(a: Aim, spare: boolean): Junk {
  const { rng } = a;
  const heads = a.real.heads;
  const chunks = a.real.chunks;
  const h = heads.length > 0 ? rng.pick(heads) : null;
  const c = chunks.length > 0 ? rng.pick(chunks) : null;
  const chunkSubject = (): string => (h !== null && rng.chance(0.7) ? cp.chunk(h.head.id, rng.int(0, Math.max(0, h.head.chunks - 1) + 1)) : cp.chunk(rng.token(22), rng.int(0, 3)));
  const fakeHead = (): CheckpointHead => ({
    seq: rng.int(1, 100_000), created: h?.head.created ?? new Date().toISOString(), id: h?.head.id ?? rng.token(22),
    seqs: [rng.int(1, 1000)], first: rng.int(1, 1000), last: rng.int(1, 1000), chunks: 1, bytes: rng.int(0, 5000), records: rng.int(0, 100),
  });
  let what: string;
  let subject: string;
  let body: Uint8Array;
  switch (rng.int(0, 9)) {
    case 0: [what, subject, body] = ['checkpoint: random head', cp.head, rng.bytes(rng.int(0, 2000))]; break;
    case 1: [what, subject, body] = ['checkpoint: random chunk', chunkSubject(), rng.bytes(rng.int(0, 2000))]; break;
    case 2: [what, subject, body] = ['checkpoint: unsealed head', cp.head, Buffer.from(JSON.stringify(fakeHead()))]; break;
    case 3: [what, subject, body] = ['checkpoint: head sealed with another secret', cp.head, Buffer.from(JSON.stringify(sealHead(otherKeys, fakeHead())))]; break;
    case 4: {
      // Another cluster's real head (sealed with the shared secret, of its own stream).
      const other = sealHead(testKeys, { ...fakeHead(), created: '2001-01-01T00:00:00.000Z' });
      [what, subject, body] = ['checkpoint: another cluster\'s head', cp.head, Buffer.from(JSON.stringify(other))];
      break;
    }
    case 5:
      if (h !== null) [what, subject, body] = [rng.chance(0.5) ? 'checkpoint: head replayed (an old one, maybe)' : 'checkpoint: head truncated', cp.head, rng.chance(0.5) ? h.data : rng.truncated(h.data)];
      else [what, subject, body] = ['checkpoint: random head', cp.head, rng.bytes(rng.int(0, 200))];
      break;
    case 6:
      if (c !== null) [what, subject, body] = ['checkpoint: chunk replayed onto its subject', c.subject, c.data];
      else [what, subject, body] = ['checkpoint: random chunk', chunkSubject(), rng.bytes(rng.int(0, 2000))];
      break;
    case 7:
      if (c !== null) [what, subject, body] = ['checkpoint: chunk truncated or flipped', rng.chance(0.5) ? c.subject : chunkSubject(), rng.chance(0.5) ? rng.truncated(c.data) : rng.flipped(c.data)];
      else [what, subject, body] = ['checkpoint: random chunk', chunkSubject(), rng.bytes(rng.int(0, 2000))];
      break;
    case 8: {
      // Frames of records the fuzzer would like applied, as a chunk of a checkpoint.
      const frames = Buffer.concat(Array.from({ length: rng.int(1, 5) }, () => encodeRecord(evilRecord(a).rec)));
      [what, subject, body] = ['checkpoint: evil frames as a chunk', chunkSubject(), frames];
      break;
    }
    default: {
      const r = a.real.records.length > 0 ? rng.pick(a.real.records).data : rng.bytes(100);
      [what, subject, body] = ['checkpoint: a stream record there', rng.chance(0.5) ? cp.head : chunkSubject(), r];
    }
  }
  if (spare && (subject === cp.head || heads.some((x) => subject.startsWith(cp.chunks(x.head.id).slice(0, -1))))) {
    subject = cp.chunk(rng.token(22), rng.int(0, 3));
    what += ' (beside the checkpoint)';
  }
  return { what, subject, body };
}

/** The batch the fuzzer would like run: its shell rule, a job, the removal of a real one. */
function evilBatch(a: Aim): Command[] {
  const ids = a.acked();
  return [
    { op: 'rule.set', rule: { id: 'evil.', pattern: 'evil.', runner: { type: 'shell', command: `touch ${a.marker}` } } },
    { op: 'job.set', id: `evil.${a.rng.token(8)}`, execution: 1n },
    ...(ids.length > 0 ? [{ op: 'job.remove', id: a.rng.pick(ids) } as const] : []),
  ];
}

/** An address for a batch: none, the holder of the lease value copied, or one of a holder's shape. */
function holderLike(a: Aim): string {
  const { rng } = a;
  if (rng.chance(0.2)) return '';
  if (a.real.lease !== null && rng.chance(0.5)) {
    try {
      const v = JSON.parse(Buffer.from(a.real.lease).toString()) as { holder?: unknown };
      if (typeof v.holder === 'string') return v.holder;
    } catch { /* the fuzzer's own value */ }
  }
  return `${rng.pick(NODES)}/${rng.int(1, 99_999)}/${rng.bytes(4).toString('hex')}`;
}

/** A body for the forwarding subject; `copied` says it is a node's batch copied unchanged (2 s or more later). */
export function forwardJunk(a: Aim): { what: string; body: Uint8Array; copied: boolean } {
  const { rng } = a;
  const sealed = (keys: ClusterKeys, cluster: string): Buffer => sealRequest(keys, cluster, holderLike(a), serialize(evilBatch(a))).body;
  const copies = a.real.requests.filter((q) => Date.now() - q.at > 2_000);
  const copy = copies.length > 0 ? rng.pick(copies) : null;
  const random = (n: number) => ({ what: 'forward: random bytes', body: rng.bytes(rng.int(0, n)), copied: false });
  switch (rng.int(0, 7)) {
    case 0: return random(2000);
    case 1: return { what: 'forward: unsealed batch', body: serialize(evilBatch(a)), copied: false };
    case 2: return { what: 'forward: batch sealed with another secret', body: sealed(otherKeys, NAME), copied: false };
    case 3: return { what: 'forward: another cluster\'s batch', body: sealed(testKeys, OTHER_CLUSTER), copied: false };
    case 4: case 5:
      if (copy === null) return random(200);
      return { what: 'forward: a node\'s batch copied (2 s or more later)', body: copy.data, copied: true };
    default:
      if (copy === null) return random(200);
      return { what: 'forward: a node\'s batch truncated or flipped', body: rng.chance(0.5) ? rng.truncated(copy.data) : rng.flipped(copy.data), copied: false };
  }
}

/** An execution that would leave the marker file behind, were it ever run. */
function evilExec(a: Aim): Record<string, unknown> {
  return { attempt: a.rng.bytes(16).toString('hex'), jobId: `evil.${a.rng.token(8)}`, execution: 1n, runner: { type: 'shell', command: `touch ${a.marker}` }, rule: 'evil.' };
}

/** The address of a node's process as its report names it (anyone reading NATS sees it), or one of its shape. */
function processLike(a: Aim, node: string): string {
  for (const r of a.real.reports) {
    if (r.key !== node) continue;
    try {
      const place = (JSON.parse(Buffer.from(r.data).toString()) as { place?: string }).place;
      const run = place === undefined ? undefined : (JSON.parse(place) as { run?: unknown }).run;
      if (typeof run === 'string' && a.rng.chance(0.7)) return `${node}/${run}`;
    } catch { /* not a report */ }
  }
  return `${node}/${a.rng.bytes(8).toString('hex')}`;
}

/**
 * A message for execution placement's subjects (lib/placement/wire.ts): a node's exec subject
 * or the results subject; `copied` says it is a real one copied unchanged (2 s or more later).
 * None may run anything or be answered with more than the empty message.
 */
export function placementJunk(a: Aim): { what: string; subject: string; body: Uint8Array; copied: boolean } {
  const { rng } = a;
  const node = rng.pick(NODES);
  const exec = `$TICKD.${NAME}.exec.${node}`;
  const results = `$TICKD.${NAME}.results`;
  const run = (): Buffer => serialize(rng.chance(0.8) ? { op: 'run', execs: [evilExec(a)] } : { op: 'census' });
  const result = (): Buffer => {
    const e = evilExec(a);
    const record = { rule: 'evil.', runner: 'shell', startedNs: 1n, latenessNs: 0n, durationNs: 0n, outcome: { kind: 'exit', status: 0, stderr: '' } };
    return serialize({ node, results: [{ jobId: rng.pick([...a.acked(), e['jobId'] as string]), attempt: e['attempt'], success: true, record }] });
  };
  const context = (name: string): Buffer => Buffer.from(`tickd/${name}/1\0`, 'latin1');
  const copies = a.real.placement.filter((q) => Date.now() - q.at > 2_000);
  switch (rng.int(0, 7)) {
    case 0: return { what: 'placement: random bytes', subject: rng.pick([exec, results]), body: rng.bytes(rng.int(0, 2000)), copied: false };
    case 1: return { what: 'placement: unsealed run', subject: exec, body: run(), copied: false };
    case 2: return { what: 'placement: run sealed with another secret', subject: exec, body: sealRequest(otherKeys, NAME, processLike(a, node), run(), Date.now(), context('exec')).body, copied: false };
    case 3: return { what: 'placement: another cluster\'s run', subject: exec, body: sealRequest(testKeys, OTHER_CLUSTER, processLike(a, node), run(), Date.now(), context('exec')).body, copied: false };
    case 4: return { what: 'placement: results sealed with another secret', subject: results, body: sealRequest(otherKeys, NAME, '', result(), Date.now(), context('results')).body, copied: false };
    default: {
      if (copies.length === 0) return { what: 'placement: random bytes', subject: exec, body: rng.bytes(rng.int(0, 200)), copied: false };
      const c = rng.pick(copies);
      if (rng.chance(0.5)) return { what: 'placement: a node\'s message copied (2 s or more later)', subject: c.subject, body: c.data, copied: true };
      return { what: 'placement: a node\'s message truncated or flipped', subject: c.subject, body: rng.chance(0.5) ? rng.truncated(c.data) : rng.flipped(c.data), copied: false };
    }
  }
}

/** A value for the nodes bucket, under a node's key or one of up to MEMBER_KEYS others (`keys`: those used so far). */
export function memberJunk(a: Aim, keys: Set<string>): { what: string; key: string; value: Uint8Array | string } {
  const { rng } = a;
  const reports = a.real.reports;
  const r = reports.length > 0 ? rng.pick(reports) : null;
  const key = (): string => {
    if (rng.chance(0.15)) return rng.pick(NODES);
    if (keys.size >= MEMBER_KEYS) return rng.pick([...keys]);
    const k = rng.token(16);
    keys.add(k);
    return k;
  };
  const report = (node: string, sealer: ClusterKeys, cluster: string): string => {
    const role = rng.pick(['leader', 'follower']);
    const applied = rng.int(0, 1_000_000);
    const mac = sealer.mac([Buffer.from(`tickd/member/1\0${cluster}\0${node}\0${role}\0${applied}`)])!.toString('hex');
    return JSON.stringify({ role, applied, key: sealer.signingId.toString('hex'), mac });
  };
  switch (rng.int(0, 7)) {
    case 0: return { what: 'nodes: random bytes', key: key(), value: rng.bytes(rng.int(0, 2000)) };
    case 1: return { what: 'nodes: a report without a seal', key: key(), value: JSON.stringify({ role: 'follower', applied: rng.int(0, 10) }) };
    case 2: { const k = key(); return { what: 'nodes: a report sealed with another secret', key: k, value: report(k, otherKeys, NAME) }; }
    case 3: { const k = key(); return { what: 'nodes: another cluster\'s report', key: k, value: report(k, testKeys, OTHER_CLUSTER) }; }
    case 4: return { what: 'nodes: odd JSON', key: key(), value: rng.pick(['null', '[]', '{"role":"leader","applied":-1}', '{"role":"leader","applied":1e300,"key":"","mac":""}', '"x"', '{']) };
    default: {
      if (r === null) return { what: 'nodes: random bytes', key: key(), value: rng.bytes(rng.int(0, 200)) };
      const kind = rng.int(0, 2);
      if (kind === 0) return { what: 'nodes: a real report replayed (stale)', key: r.key, value: r.data };
      if (kind === 1) return { what: 'nodes: a real report under another name', key: key(), value: r.data };
      return { what: 'nodes: a real report truncated or flipped', key: key(), value: rng.chance(0.5) ? rng.truncated(r.data) : rng.flipped(r.data) };
    }
  }
}

/** A foreign value of the lease key (`leader`), or, without `leader`, one under another key of the bucket. */
export function leaseJunk(a: Aim, leader: boolean): { what: string; key: string; value: Uint8Array | string } {
  const { rng } = a;
  if (!leader) return { what: 'lease: junk under another key', key: rng.token(12), value: rng.bytes(rng.int(0, 500)) };
  const kind = rng.int(0, 2);
  if (kind === 0 && a.real.lease !== null) return { what: 'lease: the holder\'s value replayed', key: 'leader', value: a.real.lease };
  if (kind === 1) return { what: 'lease: a foreign holder', key: 'leader', value: JSON.stringify({ node: 'evil', holder: 'evil/1/0', acquiredAt: new Date().toISOString(), token: rng.token() }) };
  return { what: 'lease: random bytes', key: 'leader', value: rng.bytes(rng.int(0, 1000)) };
}
