// A stream record's seal (tickd(8) SECURITY, doc/logfile-format.md "Cluster stream"): the
// leader writes each record's logfile payload behind a header that names the key and carries
// an HMAC over the stream, the subject, the sequence the record is written at and the payload.
// Every node verifies it before applying: a message anyone else published (no seal, a wrong
// one, or a real record copied to another subject or sequence) is quarantined, never applied.
//
//   body = 0xF1  key id (4 bytes)  HMAC-SHA256 (32 bytes)  payload
//
// The leader knows each record's sequence before it is stored: every publish expects the one
// before it (journal.ts). 0xF1 is no record type byte of the payload's (codec.ts: 0 to 3), so
// a body of an older tickd, which began with its payload, is told apart.
import { KEY_ID_BYTES, MAC_BYTES, type ClusterKeys } from './cluster-keys.ts';

export const SEALED_RECORD_V1 = 0xf1;
export const SEAL_BYTES = 1 + KEY_ID_BYTES + MAC_BYTES;
const CONTEXT = Buffer.from('tickd/record/1\0', 'latin1');

function macParts(stream: string, subject: string, seq: number, payload: Uint8Array): Uint8Array[] {
  const at = Buffer.allocUnsafe(8);
  at.writeBigUInt64BE(BigInt(seq));
  return [CONTEXT, Buffer.from(`${stream}\0${subject}\0`, 'latin1'), at, payload];
}

/** The body of the record `payload` written to `subject` at `seq`. */
export function sealRecord(keys: ClusterKeys, stream: string, subject: string, seq: number, payload: Uint8Array): Buffer {
  const mac = keys.mac(macParts(stream, subject, seq, payload))!;
  return Buffer.concat([Buffer.of(SEALED_RECORD_V1), keys.signingId, mac, payload]);
}

/** Why openRecord refuses a record sealed with a key this node does not have (quarantine.ts keeps it). */
export const UNKNOWN_KEY = 'sealed with a key this node does not have';

/**
 * Where the payload of a sealed body at buf[start, end) begins, read at `subject` and `seq`;
 * or why it is no record of this cluster's (a string: quarantined).
 */
export function openRecord(keys: ClusterKeys, stream: string, subject: string, seq: number, buf: Buffer, start: number, end: number): number | string {
  if (end - start < SEAL_BYTES + 1) return end === start ? 'an empty message' : `${end - start} bytes, shorter than a sealed record`;
  if (buf[start] !== SEALED_RECORD_V1) return `no tickd seal (first byte ${buf[start]})`;
  const id = buf.subarray(start + 1, start + 1 + KEY_ID_BYTES);
  const mac = buf.subarray(start + 1 + KEY_ID_BYTES, start + SEAL_BYTES);
  const payload = buf.subarray(start + SEAL_BYTES, end);
  if (!keys.verify(macParts(stream, subject, seq, payload), id, mac)) {
    return keys.mac([], id) === null ? `${UNKNOWN_KEY} (id ${id.toString('hex')})` : 'a seal that does not verify';
  }
  return start + SEAL_BYTES;
}
