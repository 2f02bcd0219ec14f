// What a node does with a stream message that is not a record of its cluster (tickd(8) SECURITY,
// Quarantine): no seal, a seal that does not verify (published by someone without the cluster's
// secret, or a real record copied to another subject or sequence), or a sealed payload that
// does not decode (a newer or broken writer). It is never applied and never stops a replay,
// the tail or a checkpoint: it is quarantined, i.e. skipped, counted, named in a warning with
// its sequence and subject, listed by `tickd dump --cluster`, and deleted by the leader
// (ClusterNode), so that the log stays clean. Every read of records goes through readRecord.
//
// A sealed record of a newer tickd (its payload needs a format above this code's, codec.ts)
// is the cluster's own and must never be dropped: readRecord throws StreamTooNewError, and
// the reader stops there (the node must be upgraded: tickd(8) UPGRADING).
import type { LogRecord } from '../engine/journal.ts';
import { errorText } from '../errors.ts';
import { newerFormatText } from '../domain/format.ts';
import { decodePayload, NewerRecordError } from '../logfile/codec.ts';
import type { ClusterKeys } from './cluster-keys.ts';
import { openRecord, UNKNOWN_KEY } from './record-seal.ts';

export interface Quarantined {
  readonly seq: number;
  readonly subject: string;
  readonly why: string;
  /**
   * False for a record sealed with a key this node does not have: it may be the cluster's own,
   * sealed with a secret missing from this node's file (a rotation done out of order), so it
   * is skipped but never deleted.
   */
  readonly deletable: boolean;
  /**
   * Met by a tail still reading what came while the copy was built (tail.ts): the record it
   * pushed out may have gone before the replay reached it, so the copy may hold an older one,
   * or none.
   */
  readonly behind?: boolean;
}

/** How a reader of the stream tells records from the rest: the keys, and where the rest goes. */
export interface StreamTrust {
  readonly keys: ClusterKeys;
  quarantined(q: Quarantined): void;
}

/** A record of the cluster's that only a newer tickd reads: nothing after it is applied. */
export class StreamTooNewError extends Error {
  override readonly name = 'StreamTooNewError';
  readonly format: number;
  readonly seq: number;
  readonly subject: string;
  constructor(format: number, seq: number, subject: string) {
    super(newerFormatText(format, `at stream sequence ${seq} (${subject})`));
    this.format = format;
    this.seq = seq;
    this.subject = subject;
  }
}

/** The record of the message body buf[start, end) at `subject` and `seq`, or null (quarantined, told to `trust`). */
export function readRecord(trust: StreamTrust, stream: string, subject: string, seq: number, buf: Buffer, start: number, end: number, behind = false): LogRecord | null {
  const at = openRecord(trust.keys, stream, subject, seq, buf, start, end);
  if (typeof at === 'string') {
    trust.quarantined({ seq, subject, why: at, deletable: !at.startsWith(UNKNOWN_KEY), behind });
    return null;
  }
  try {
    return decodePayload(buf, at, end, -at);
  } catch (err) {
    if (err instanceof NewerRecordError) throw new StreamTooNewError(err.needs, seq, subject);
    trust.quarantined({ seq, subject, why: `a sealed record that does not decode: ${errorText(err)}`, deletable: true });
    return null;
  }
}

/** readRecord of a message's data as the client library hands it out. */
export function readMessage(trust: StreamTrust, stream: string, subject: string, seq: number, data: Uint8Array, behind = false): LogRecord | null {
  const buf = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return readRecord(trust, stream, subject, seq, buf, 0, buf.length, behind);
}
