// The records a node owes the stream (lib/leadership/quarantine-book.ts), as it tells the
// other nodes in its report (members.ts): a node that takes over writes what it owes, and
// what another node owes where its own copy cannot say or can only guess (restore.ts). Without
// this, a leader whose restore the lease cut short (or that stepped down before it saw the
// foreign message) took the only copy that knew the record with it, and the next leader
// wrote its own copy's record instead: absent when that copy was built while the foreign
// message was there, older when it followed behind and never saw the last write.
//
// A report's list is JSON text sealed apart (OWED_CONTEXT, like the format: members.ts) so
// that older nodes, which ignore fields they do not know, still take the report. It holds
// MAX_CLAIMS at most and MAX_TEXT characters: a node that owes more tells the rest later,
// once the first are written again.
//
//   [[seq, subject, certain (1 or 0), the record's logfile payload in base64], ...]
import type { LogRecord } from '../engine/journal.ts';
import { decodePayload, encodeRecord, FRAME_HEADER_BYTES } from '../logfile/codec.ts';

/** A foreign message on an identifier's subject, and the record it pushed out as a node's copy held it. */
export interface Claim {
  /** The foreign message's sequence. */
  readonly seq: number;
  readonly subject: string;
  readonly owed: LogRecord;
  /**
   * Taken from a leader's copy (the acknowledged state) when its tenure ended, rather than from
   * a follower's, which may have fallen behind and never seen the record's last write.
   */
  readonly certain: boolean;
}

const MAX_CLAIMS = 500;
const MAX_TEXT = 256 * 1024;
/** Longer than any subject tickd writes (subjects.ts) */
const MAX_SUBJECT = 1024;

/** The text a report carries for `claims` (the first of them, within the bounds), or null for none. */
export function claimsText(claims: readonly Claim[]): string | null {
  const out: string[] = [];
  let length = 2;
  for (const c of claims) {
    if (out.length >= MAX_CLAIMS) break;
    const payload = encodeRecord(c.owed).subarray(FRAME_HEADER_BYTES).toString('base64');
    const item = JSON.stringify([c.seq, c.subject, c.certain ? 1 : 0, payload]);
    if (length + item.length + 1 > MAX_TEXT) break;
    length += item.length + 1;
    out.push(item);
  }
  return out.length === 0 ? null : `[${out.join(',')}]`;
}

/** The claims of a report's text (its seal verified by the caller); those that do not read are left out. */
export function readClaims(text: string): Claim[] {
  if (text.length > MAX_TEXT) return [];
  let list: unknown;
  try {
    list = JSON.parse(text);
  } catch {
    return [];
  }
  if (!Array.isArray(list)) return [];
  const out: Claim[] = [];
  for (const item of list.slice(0, MAX_CLAIMS)) {
    if (!Array.isArray(item) || item.length !== 4) continue;
    const [seq, subject, certain, payload] = item as unknown[];
    if (!Number.isSafeInteger(seq) || (seq as number) < 1 || typeof subject !== 'string' || subject.length > MAX_SUBJECT) continue;
    if ((certain !== 0 && certain !== 1) || typeof payload !== 'string') continue;
    try {
      const buf = Buffer.from(payload, 'base64');
      out.push({ seq: seq as number, subject, certain: certain === 1, owed: decodePayload(buf, 0, buf.length) });
    } catch { /* a record this code does not read (a newer node's): not this node's to write */ }
  }
  return out;
}
