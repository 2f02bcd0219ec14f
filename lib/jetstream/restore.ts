// Putting back what a foreign message pushed out of the stream (tickd(8) SECURITY, Quarantine).
// The stream keeps one message per subject, so anything published on a live identifier's
// subject by someone without the cluster's secret replaces that identifier's record: it is
// quarantined and never applied, but the record is gone from the stream, and every later
// replay would go without it. The nodes whose copies held the record when they met the
// message owe it (lib/leadership/quarantine-book.ts: the job or rule as the copy held it, or
// its removal when it held none, since a removal pushed out could let a checkpoint's older copy
// of the job come back); the one that leads writes what it owes again, sealed, over the
// foreign message, which is never deleted. Foreign messages on other subjects are deleted. A
// record with a valid seal that this leader did not write means another writer: nothing is
// restored and the caller rebuilds from the stream, as before.
//
// Called with the lease held by this node: at take-over, for what it owes; after a write was
// refused for its expected sequence, for that and for everything after the node's last
// acknowledged write. Each restore is published with the sequence it expects, so a foreign
// message meanwhile fails it and the pass starts over (MAX_PASSES at most; what is left stays
// owed).
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { alreadyGone } from './api-errors.ts';
import { nextOnLeader } from './stream.ts';
import type { LogRecord } from '../engine/journal.ts';
import { errorText } from '../errors.ts';
import { isWrongLastSequence } from '../lease/errors.ts';
import type { Logger } from '../log.ts';
import { encodeRecord, FRAME_HEADER_BYTES } from '../logfile/codec.ts';
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
  /** A record written again, once acknowledged: the copy takes it too (an owed one it may lack, a rebuilt copy). */
  readonly wrote: (rec: LogRecord) => void;
  readonly log: Logger;
}

/** A quarantined message: where it is, and the record it pushed out as a copy knew it then. */
export interface Stray {
  readonly seq: number;
  readonly subject: string;
  /** Taken from the copy when the message was met: the copy may since have been rebuilt without it. */
  readonly owed?: LogRecord;
}

export type RestoreOutcome =
  /** `settled`: the sequences of the strays now dealt with (restored over, deleted, or gone). */
  | { readonly restored: number; readonly deleted: number; readonly lastSeq: number; readonly settled: readonly number[] }
  | { readonly otherWriter: string };

/**
 * Restores the records pushed out by the foreign messages after `afterSeq` and by `known`
 * (quarantined earlier), and deletes the rest of them; or says another writer wrote.
 */
export async function restoreOverStrays(o: RestoreOptions, afterSeq: number, known: readonly Stray[] = []): Promise<RestoreOutcome> {
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
    const strays = [...(await stillThere(o, extra)), ...scan.strays.map((s) => ({ ...s, owed: o.owedAt(s.seq) }))];
    for (const s of strays) seen.add(s.seq);
    let last = scan.lastSeq;
    let interrupted = false;
    for (const s of strays) {
      const rec = s.owed;
      if (rec === undefined) continue; // no identifier's subject (deleted below), or not this copy's to say
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
      o.wrote(rec);
    }
    if (interrupted) {
      from = last;
      extra = strays;
      continue;
    }
    // The strays on identifiers' subjects were replaced by the restores; the others go now.
    for (const s of strays) if (identifierOf(o.subjects, s.subject) === null && (await deleteStray(o, s.seq))) deleted++;
    if (strays.length > 0) o.log.warn({ restored, deleted, strays: strays.length, lastSeq: last }, 'records pushed out of the stream by foreign messages written again from this node\'s copy');
    return { restored, deleted, lastSeq: last, settled: [...seen] };
  }
  throw new Error(`foreign messages kept arriving while restoring (${MAX_PASSES} passes)`);
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
 * The known strays whose subject still holds a foreign message (that one, or a later one that
 * replaced it): those are written again. A subject whose message is a record of the cluster's
 * was written since; one with no message held a removal, deleted once no node needed it
 * (foreign messages on identifiers' subjects are never deleted, only written over: see
 * QuarantineBook.clear).
 */
async function stillThere(o: RestoreOptions, known: readonly Stray[]): Promise<Stray[]> {
  const out: Stray[] = [];
  for (const s of known) {
    const m = await o.jsm.streams.getMessage(o.subjects.stream, { last_by_subj: s.subject });
    if (m === null || m.seq < s.seq) continue;
    const buf = Buffer.from(m.data.buffer, m.data.byteOffset, m.data.byteLength);
    if (typeof openRecord(o.trust.keys, o.subjects.stream, m.subject, m.seq, buf, 0, buf.length) === 'string') out.push({ ...s, seq: m.seq });
  }
  return out;
}


/** The job or rule whose subject `subject` is, or null (no identifier's subject). */
export function identifierOf(subjects: ClusterSubjects, subject: string): { readonly kind: 'job' | 'rule'; readonly id: string } | null {
  const prefix = `${subjects.stream}.`;
  if (!subject.startsWith(prefix)) return null;
  const [tree, token, ...more] = subject.slice(prefix.length).split('.');
  if ((tree !== 'j' && tree !== 'r') || token === undefined || token === '' || more.length > 0) return null;
  const id = decodeToken(token);
  if (encodeToken(id) !== token) return null; // no token tickd would write
  return { kind: tree === 'j' ? 'job' : 'rule', id };
}



async function deleteStray(o: RestoreOptions, seq: number): Promise<boolean> {
  try {
    return await o.jsm.streams.deleteMessage(o.subjects.stream, seq, false);
  } catch (err) {
    if (!alreadyGone(err)) o.log.warn({ seq, err: errorText(err) }, 'deleting a foreign message failed; it stays quarantined');
    return false;
  }
}
