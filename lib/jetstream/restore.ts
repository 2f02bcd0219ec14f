// Putting back what a foreign message pushed out of the stream (tickd(8) SECURITY, Quarantine).
// The stream keeps one message per subject, so anything published on a live identifier's
// subject by someone without the cluster's secret replaces that identifier's record: it is
// quarantined and never applied, but the record is gone from the stream, and every later
// replay would go without it. The nodes whose copies held the record when they met the
// message owe it (lib/leadership/quarantine-book.ts: the job or rule as the copy held it, or
// its removal when it held none, since a removal pushed out could let a checkpoint's older copy
// of the job come back), and say so in their reports (owed-claims.ts); the one that leads
// writes again, sealed, over the foreign message (which is never deleted), what it owes and
// what the others owe: for each subject one record, a leader's copy's before a follower's
// (chooseOwed). Foreign messages on other subjects are deleted. A record with a valid seal
// that this leader did not write means another writer: nothing is restored and the caller
// rebuilds from the stream, as before.
//
// Called with the lease held by this node: at take-over, for what is owed; after a write was
// refused for its expected sequence, for that and for everything after the node's last
// acknowledged write. Each restore is published with the sequence it expects, so a foreign
// message meanwhile fails it and the pass starts over (MAX_PASSES at most; what is left stays
// owed). A node whose tenure ended without the lease only reads what follows its last write
// (noteStrays), so that it owes what it finds.
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { alreadyGone } from './api-errors.ts';
import { nextOnLeader } from './stream.ts';
import type { LogRecord } from '../engine/journal.ts';
import { errorText } from '../errors.ts';
import { isWrongLastSequence } from '../lease/errors.ts';
import type { Logger } from '../log.ts';
import { encodeRecord, FRAME_HEADER_BYTES } from '../logfile/codec.ts';
import type { Claim } from './owed-claims.ts';
import { readMessage, type StreamTrust } from './quarantine.ts';
import { openRecord, sealRecord } from './record-seal.ts';
import { decodeToken, encodeToken, type ClusterSubjects } from './subjects.ts';

/** Messages read after the last acknowledged write at most: more is not a stray message but a writer. */
const MAX_SCAN = 10_000;
const MAX_PASSES = 10;

export interface RestoreOptions {
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly subjects: ClusterSubjects;
  /** The keys, and where each foreign message found is told (counted and warned of: quarantine.ts). */
  readonly trust: StreamTrust;
  /** This tenure's writer id: the prefix of the message ids of the records it wrote. */
  readonly writerId: string;
  /**
   * The record a foreign message found after `afterSeq` pushed out, as the node's copy held it
   * when the scan met it (the scan tells `trust`, which takes it: QuarantineBook), or undefined
   * when the copy cannot know it (it was built while the subject held a foreign message).
   */
  readonly owedAt: (seq: number) => LogRecord | undefined;
  readonly mayWrite: () => boolean;
  /** A record written again on `subject` at `seq`, once acknowledged: the copy takes it too (an owed one it may lack, a rebuilt copy). */
  readonly wrote: (rec: LogRecord, subject: string, seq: number) => void;
  readonly log: Logger;
}

/** A quarantined message: where it is, and the record it pushed out as a copy knew it then. */
export interface Stray {
  readonly seq: number;
  readonly subject: string;
  /** Taken from the copy when the message was met: the copy may since have been rebuilt without it. */
  readonly owed?: LogRecord;
  /** Taken from a leader's copy (owed-claims.ts). */
  readonly certain?: boolean;
  /** Another node's claim. */
  readonly theirs?: boolean;
}

export type RestoreOutcome =
  /** `settled`: the sequences of the strays now dealt with (restored over, deleted, or gone). */
  | { readonly restored: number; readonly deleted: number; readonly lastSeq: number; readonly settled: readonly number[] }
  | { readonly otherWriter: string };

/**
 * Restores the records pushed out by the foreign messages after `afterSeq` and by `known`
 * (quarantined earlier), with what `others` owe (other nodes' claims: owed-claims.ts), and
 * deletes the rest of them; or says another writer wrote.
 */
export async function restoreOverStrays(o: RestoreOptions, afterSeq: number, known: readonly Stray[] = [], others: readonly Claim[] = []): Promise<RestoreOutcome> {
  let restored = 0;
  let deleted = 0;
  let from = afterSeq;
  let extra = known;
  const seen = new Set<number>(known.map((k) => k.seq));
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const scan = await scanAfter(o, from);
    if ('otherWriter' in scan) return scan;
    // A scanned stray carries what is owed for it from now on: a later pass may find its
    // subject under a newer foreign message, at another sequence.
    const scanned = scan.strays.map((s) => ({ ...s, owed: o.owedAt(s.seq) }));
    for (const s of scanned) seen.add(s.seq);
    const owed = await chooseOwed(o, [...extra, ...scanned.filter((s) => s.owed !== undefined)], others);
    const strays = [...owed, ...scanned.filter((s) => s.owed === undefined)];
    let last = scan.lastSeq;
    let interrupted = false;
    for (const s of strays) {
      const rec = s.owed;
      if (rec === undefined) continue; // no identifier's subject (deleted below), or no node's to say
      if (!o.mayWrite()) throw new Error('the lease ran out while restoring records');
      const payload = encodeRecord(rec).subarray(FRAME_HEADER_BYTES);
      try {
        await o.js.publish(s.subject, sealRecord(o.trust.keys, o.subjects.stream, s.subject, last + 1, payload), {
          expect: { lastSequence: last }, msgID: `${o.writerId}:restore:${last}`,
        });
      } catch (err) {
        if (!isWrongLastSequence(err)) throw err;
        interrupted = true; // another foreign message: read again from what is restored
        break;
      }
      last++;
      restored++;
      o.wrote(rec, s.subject, last);
    }
    if (interrupted) {
      from = last;
      extra = owed;
      continue;
    }
    // The strays on identifiers' subjects were replaced by the restores; the others go now.
    for (const s of strays) if (identifierOf(o.subjects, s.subject) === null && (await deleteStray(o, s.seq))) deleted++;
    if (strays.length > 0) o.log.warn({ restored, deleted, strays: strays.length, lastSeq: last }, 'records pushed out of the stream by foreign messages written again from this node\'s copy');
    return { restored, deleted, lastSeq: last, settled: [...seen] };
  }
  throw new Error(`foreign messages kept arriving while restoring (${MAX_PASSES} passes)`);
}

/**
 * Reads the messages after `afterSeq` only: each foreign one is told to `trust` (which keeps
 * what its copy owes for it). What a node that stepped down does when it may no longer write.
 */
export async function noteStrays(o: RestoreOptions, afterSeq: number): Promise<void> {
  await scanAfter(o, afterSeq);
}

/** The messages after `afterSeq`: the foreign ones, or the first record of another writer. */
async function scanAfter(o: RestoreOptions, afterSeq: number): Promise<{ strays: Stray[]; lastSeq: number } | { otherWriter: string }> {
  const lastSeq = (await o.jsm.streams.info(o.subjects.stream)).state.last_seq;
  if (lastSeq - afterSeq > MAX_SCAN) return { otherWriter: `${lastSeq - afterSeq} messages after this node's last write` };
  const strays: Stray[] = [];
  for (let seq = afterSeq + 1; seq <= lastSeq;) {
    const m = await nextOnLeader(o.jsm, o.subjects.stream, seq);
    if (m === null || m.seq > lastSeq) break;
    seq = m.seq + 1;
    if (readMessage(o.trust, o.subjects.stream, m.subject, m.seq, m.data) === null) {
      strays.push({ seq: m.seq, subject: m.subject });
      continue;
    }
    const id = m.header?.get('Nats-Msg-Id') ?? '';
    if (!id.startsWith(`${o.writerId}:`)) return { otherWriter: `record ${m.seq} (${m.subject}) was sealed by a node, not written by this tenure` };
  }
  return { strays, lastSeq };
}

/**
 * What to write on each subject of `own` (this node's strays) and `others` (other nodes'
 * claims) that still holds a foreign message: the record owed for that very message, taken
 * from a leader's copy if any node has one, else from a follower's (this node's first); or,
 * failing those, the record owed for an earlier foreign message there, this node's before
 * another's (a record applied there since would have settled it; another node's may come from
 * an older report copied back, but it is still a record the cluster acknowledged once, and
 * without it the subject keeps the foreign message and the identifier is lost at the next
 * replay). A subject whose message is a record of the cluster's was written since; one with
 * no message held a removal, deleted once no node needed it (foreign messages on identifiers'
 * subjects are never deleted, only written over: see QuarantineBook.clear).
 */
async function chooseOwed(o: RestoreOptions, own: readonly Stray[], others: readonly Claim[]): Promise<Stray[]> {
  const bySubject = new Map<string, Stray[]>();
  for (const s of [...own, ...others.map((c) => ({ ...c, theirs: true }))]) {
    const list = bySubject.get(s.subject);
    if (list === undefined) bySubject.set(s.subject, [s]);
    else list.push(s);
  }
  const out: Stray[] = [];
  for (const [subject, candidates] of bySubject) {
    const m = await o.jsm.streams.getMessage(o.subjects.stream, { last_by_subj: subject });
    if (m === null) continue;
    const buf = Buffer.from(m.data.buffer, m.data.byteOffset, m.data.byteLength);
    if (typeof openRecord(o.trust.keys, o.subjects.stream, m.subject, m.seq, buf, 0, buf.length) !== 'string') continue;
    const rank = (s: Stray): number => (s.seq === m.seq ? 100 : s.theirs === true ? 10 : 50) + (s.certain === true ? 2 : 0) + (s.theirs === true ? 0 : 1);
    const best = candidates
      .filter((s) => s.owed !== undefined && s.seq <= m.seq)
      .sort((x, y) => rank(y) - rank(x) || y.seq - x.seq)[0];
    if (best !== undefined) out.push({ seq: m.seq, subject, owed: best.owed, certain: best.certain, theirs: best.theirs });
  }
  return out;
}

/** What kind of entry a subject of an identifier holds. */
export type EntryKind = 'job' | 'rule' | 'schedule';
const TREES: Readonly<Record<string, EntryKind>> = { j: 'job', r: 'rule', s: 'schedule' };

/** The job, rule or schedule whose subject `subject` is, or null (no identifier's subject). */
export function identifierOf(subjects: ClusterSubjects, subject: string): { readonly kind: EntryKind; readonly id: string } | null {
  const prefix = `${subjects.stream}.`;
  if (!subject.startsWith(prefix)) return null;
  const [tree, token, ...more] = subject.slice(prefix.length).split('.');
  const kind = tree === undefined || !Object.hasOwn(TREES, tree) ? undefined : TREES[tree];
  if (kind === undefined || token === undefined || token === '' || more.length > 0) return null;
  const id = decodeToken(token);
  if (encodeToken(id) !== token) return null; // no token tickd would write
  return { kind, id };
}



async function deleteStray(o: RestoreOptions, seq: number): Promise<boolean> {
  try {
    return await o.jsm.streams.deleteMessage(o.subjects.stream, seq, false);
  } catch (err) {
    if (!alreadyGone(err)) o.log.warn({ seq, err: errorText(err) }, 'deleting a foreign message failed; it stays quarantined');
    return false;
  }
}
