// The seals of forwarding (forwarding.ts; tickd(8) SECURITY): a follower's batch is run by the
// leader only when it carries a MAC under the cluster's key, was sealed within FRESH_MS of the
// leader's clock, is addressed to this leader's tenure (its lease holder, unique to one
// tenure) and was not seen before (a copied batch is not run twice); the leader's answer
// carries a MAC over the request's nonce and the answer, so that no one else can answer a
// follower in the leader's name (and acknowledge writes that never happened).
//
// Why the address: nonces are remembered by one tenure's leader only, so without it a copy of
// a batch that ran under the last leader would run again under the next. A batch addressed to
// another tenure is not run but redirected: answered (sealed) with this tenure's holder, so a
// follower whose view of the lease lags sends it again at once, to the right address.
//
//   request = 0xF2  key id (4)  sealed at, ms since the epoch (8)  nonce (16)  HMAC (32)
//             address length (1)  address (the holder, UTF-8)  payload
//   answer  = 0xF3  key id (4)  HMAC (32)  payload
//
// Execution placement (lib/placement/wire.ts) seals its messages the same way under contexts
// of its own, so that no message of one kind can be taken for another.
import { randomBytes } from 'node:crypto';
import { KEY_ID_BYTES, MAC_BYTES, type ClusterKeys } from './cluster-keys.ts';

const REQUEST = 0xf2;
const ANSWER = 0xf3;
const NONCE_BYTES = 16;
const REQUEST_HEAD = 1 + KEY_ID_BYTES + 8 + NONCE_BYTES + MAC_BYTES + 1;
const ANSWER_HEAD = 1 + KEY_ID_BYTES + MAC_BYTES;
const REQUEST_CONTEXT = Buffer.from('tickd/forward/2\0', 'latin1');
const ANSWER_CONTEXT = Buffer.from('tickd/answer/1\0', 'latin1');
/** How far a request's seal may be from the leader's clock (the nodes' clocks differ by less). */
export const FRESH_MS = 60_000;
/** Nonces remembered at most: a node forwards far fewer batches in 2 × FRESH_MS. */
const MAX_NONCES = 1_000_000;

export interface SealedRequest {
  readonly body: Buffer;
  readonly nonce: Buffer;
}

/** A batch for the tenure of lease holder `to` ('' when none is known: it is redirected). */
export function sealRequest(keys: ClusterKeys, cluster: string, to: string, payload: Uint8Array, nowMs = Date.now(), context: Buffer = REQUEST_CONTEXT): SealedRequest {
  const at = Buffer.allocUnsafe(8);
  at.writeBigUInt64BE(BigInt(nowMs));
  const nonce = randomBytes(NONCE_BYTES);
  const address = addressBytes(to);
  const mac = keys.mac([context, Buffer.from(`${cluster}\0`), at, nonce, address, payload])!;
  return { body: Buffer.concat([Buffer.of(REQUEST), keys.signingId, at, nonce, mac, address, payload]), nonce };
}

/** The longest address: a holder is node name, pid and a random part, far below it. */
export const MAX_ADDRESS_BYTES = 255;

/** Whether `holder` can be an address (the lease key holds whatever anyone wrote there). */
export function addressable(holder: string): boolean {
  return Buffer.byteLength(holder, 'utf8') <= MAX_ADDRESS_BYTES;
}

/** Length byte and UTF-8; an address too long for it is sent as none ('': redirected). */
function addressBytes(to: string): Buffer {
  const s = addressable(to) ? Buffer.from(to, 'utf8') : Buffer.alloc(0);
  return Buffer.concat([Buffer.of(s.length), s]);
}

/** The batches a leader has run lately, by nonce: a copy of one is refused. */
export class NonceBook {
  private readonly seen = new Map<string, number>();

  /** False when `nonce` was seen (or the book is full); remembers it otherwise. */
  admit(nonce: Buffer, nowMs: number): boolean {
    const key = nonce.toString('base64');
    if (this.seen.has(key)) return false;
    if (this.seen.size >= MAX_NONCES) this.forget(nowMs);
    if (this.seen.size >= MAX_NONCES) return false;
    this.seen.set(key, nowMs);
    return true;
  }

  /** Drops the nonces older than any request still fresh (insertion order is time order). */
  forget(nowMs: number): void {
    for (const [key, at] of this.seen) {
      if (nowMs - at <= 2 * FRESH_MS) break;
      this.seen.delete(key);
    }
  }
}

export type OpenedRequest =
  | { readonly payload: Buffer; readonly nonce: Buffer; /** When it was sealed, ms since the epoch (the sender's clock). */ readonly sealedAt: number }
  /** A node's batch for another tenure: not run; its sender is told this tenure's holder. */
  | { readonly misaddressed: string; readonly nonce: Buffer }
  | { readonly refused: string };

/**
 * A request's payload and nonce when it is for the tenure of `holder`; a misaddressed one's
 * address; or why it is refused (never run, never answered with anything but an empty answer).
 */
export function openRequest(keys: ClusterKeys, cluster: string, holder: string, body: Uint8Array, nonces: NonceBook, nowMs = Date.now(), context: Buffer = REQUEST_CONTEXT): OpenedRequest {
  const b = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (b.length < REQUEST_HEAD || b[0] !== REQUEST) return { refused: 'not a sealed batch' };
  let p = 1;
  const id = b.subarray(p, (p += KEY_ID_BYTES));
  const at = b.subarray(p, (p += 8));
  const nonce = b.subarray(p, (p += NONCE_BYTES));
  const mac = b.subarray(p, (p += MAC_BYTES));
  const addressEnd = p + 1 + b[p]!;
  if (addressEnd > b.length) return { refused: 'not a sealed batch' };
  const address = b.subarray(p, addressEnd);
  const payload = b.subarray(addressEnd);
  if (!keys.verify([context, Buffer.from(`${cluster}\0`), at, nonce, address, payload], id, mac)) return { refused: 'a seal that does not verify' };
  const sealedAt = Number(at.readBigUInt64BE());
  if (Math.abs(nowMs - sealedAt) > FRESH_MS) return { refused: `sealed ${Math.round((nowMs - sealedAt) / 1000)} s from this node's clock` };
  if (address.toString('utf8', 1) !== holder) return { misaddressed: address.toString('utf8', 1), nonce: Buffer.from(nonce) };
  nonces.forget(nowMs);
  if (!nonces.admit(Buffer.from(nonce), nowMs)) return { refused: 'a batch run before (a copy)' };
  return { payload, nonce: Buffer.from(nonce), sealedAt };
}

export function sealAnswer(keys: ClusterKeys, cluster: string, nonce: Buffer, payload: Uint8Array, context: Buffer = ANSWER_CONTEXT): Buffer {
  const mac = keys.mac([context, Buffer.from(`${cluster}\0`), nonce, payload])!;
  return Buffer.concat([Buffer.of(ANSWER), keys.signingId, mac, payload]);
}

/** The answer's payload, or null when it is not the leader's answer to the request of `nonce`. */
export function openAnswer(keys: ClusterKeys, cluster: string, nonce: Buffer, body: Buffer, context: Buffer = ANSWER_CONTEXT): Buffer | null {
  if (body.length < ANSWER_HEAD || body[0] !== ANSWER) return null;
  const id = body.subarray(1, 1 + KEY_ID_BYTES);
  const mac = body.subarray(1 + KEY_ID_BYTES, ANSWER_HEAD);
  const payload = body.subarray(ANSWER_HEAD);
  return keys.verify([context, Buffer.from(`${cluster}\0`), nonce, payload], id, mac) ? payload : null;
}
