// Putting back what a foreign message pushed out of the stream (tickd(8) SECURITY, Quarantine).
// The stream keeps one message per subject, so anything published on a live identifier's
// subject by someone without the cluster's secret replaces that identifier's record: it is
// quarantined and never applied, but the record is gone from the stream, and every later
// replay would go without it. The node that leads (or is about to) still has the record in its
// copy, so it writes it again, sealed, from that copy: the job or rule as the copy holds it, or
// its removal when the copy has none (a removal pushed out could otherwise let a checkpoint's
// older copy of the job come back). Then it deletes the foreign messages left on other
// subjects. A record with a valid seal that this leader did not write means another writer:
// nothing is restored and the caller rebuilds from the stream, as before.
//
// Called with the lease held by this node: at take-over, for the messages the node's tail
// quarantined; after a write was refused for its expected sequence, for everything after the
// node's last acknowledged write. Each restore is published with the sequence it expects, so a
// second foreign message meanwhile fails it and the pass starts over (MAX_PASSES at most).
import { JetStreamApiError, type JetStreamClient, type JetStreamManager, type MsgRequest, type NextMsgRequest, type StoredMsg } from '@nats-io/jetstream';
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
const MAX_PASSES = 3;

export interface RestoreOptions {
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly subjects: ClusterSubjects;
  /** The keys, and where each foreign message found is told (counted and warned of: quarantine.ts). */
  readonly trust: StreamTrust;
  /** This tenure's writer id: the prefix of the message ids of the records it wrote. */
  readonly writerId: string;
  /** The node's copy of an identifier: the job or rule, or undefined when it has none. */
  readonly copyOf: (kind: 'job' | 'rule', id: string) => LogRecord | undefined;
  readonly mayWrite: () => boolean;
  readonly log: Logger;
}

/** A quarantined message: where it is. */
export interface Stray {
  readonly seq: number;
  readonly subject: string;
}

export type RestoreOutcome =
  | { readonly restored: number; readonly deleted: number; readonly lastSeq: number }
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
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const scan = await scanAfter(o, from);
    if ('otherWriter' in scan) return scan;
    const strays = [...(await stillThere(o, extra)), ...scan.strays];
    let last = scan.lastSeq;
    let interrupted = false;
    for (const s of strays) {
      const rec = recordFor(o, s.subject);
      if (rec === null) continue;
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
    }
    if (interrupted) {
      from = last;
      extra = strays;
      continue;
    }
    // The strays on identifiers' subjects were replaced by the restores; the others go now.
    for (const s of strays) if (recordFor(o, s.subject) === null && (await deleteStray(o, s.seq))) deleted++;
    if (strays.length > 0) o.log.warn({ restored, deleted, strays: strays.length, lastSeq: last }, 'records pushed out of the stream by foreign messages written again from this node\'s copy');
    return { restored, deleted, lastSeq: last };
  }
  throw new Error(`foreign messages kept arriving while restoring (${MAX_PASSES} passes)`);
}

/** The messages after `afterSeq`: the foreign ones, or the first record of another writer. */
async function scanAfter(o: RestoreOptions, afterSeq: number): Promise<{ strays: Stray[]; lastSeq: number } | { otherWriter: string }> {
  const lastSeq = (await o.jsm.streams.info(o.subjects.stream)).state.last_seq;
  if (lastSeq - afterSeq > MAX_SCAN) return { otherWriter: `${lastSeq - afterSeq} messages after this node's last write` };
  const strays: Stray[] = [];
  for (let seq = afterSeq + 1; seq <= lastSeq;) {
    const m = await nextMessage(o.jsm, o.subjects.stream, seq);
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

/** The known strays still in the stream (a later write to the subject replaced the others). */
async function stillThere(o: RestoreOptions, known: readonly Stray[]): Promise<Stray[]> {
  const out: Stray[] = [];
  for (const s of known) {
    const m = await nextMessage(o.jsm, o.subjects.stream, s.seq);
    if (m === null || m.seq !== s.seq) continue;
    const buf = Buffer.from(m.data.buffer, m.data.byteOffset, m.data.byteLength);
    if (typeof openRecord(o.trust.keys, o.subjects.stream, m.subject, m.seq, buf, 0, buf.length) === 'string') out.push(s);
  }
  return out;
}

/** What to write on a stray's subject: the copy's record of its identifier, its removal, or null (no identifier's subject). */
function recordFor(o: RestoreOptions, subject: string): LogRecord | null {
  const prefix = `${o.subjects.stream}.`;
  if (!subject.startsWith(prefix)) return null;
  const [tree, token, ...more] = subject.slice(prefix.length).split('.');
  if ((tree !== 'j' && tree !== 'r') || token === undefined || token === '' || more.length > 0) return null;
  const id = decodeToken(token);
  if (encodeToken(id) !== token) return null; // no token tickd would write
  const kind = tree === 'j' ? 'job' : 'rule';
  return o.copyOf(kind, id) ?? (kind === 'job' ? { t: 'job.removed', id } : { t: 'rule.removed', id });
}

async function nextMessage(jsm: JetStreamManager, stream: string, seq: number): Promise<StoredMsg | null> {
  const query: NextMsgRequest = { seq, next_by_subj: '>' };
  try {
    return await jsm.streams.getMessage(stream, query as unknown as MsgRequest);
  } catch (err) {
    if (err instanceof JetStreamApiError && /no message found/i.test(err.message)) return null;
    throw err;
  }
}

async function deleteStray(o: RestoreOptions, seq: number): Promise<boolean> {
  try {
    return await o.jsm.streams.deleteMessage(o.subjects.stream, seq, false);
  } catch (err) {
    if (!/no message found|not found/i.test(errorText(err))) o.log.warn({ seq, err: errorText(err) }, 'deleting a foreign message failed; it stays quarantined');
    return false;
  }
}
