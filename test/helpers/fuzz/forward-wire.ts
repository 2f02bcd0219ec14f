// The forwarding wire as the fuzzer reads it (lib/jetstream/forward-seal.ts, forwarding.ts):
// the parts of a node's sealed batch it overhears or copies, what the leader's answer to a
// request of its own says (nothing, a redirect, or the replies of a batch that ran), and the
// replies it forges in the leader's name.
import { deserialize } from 'node:v8';
import type { Command, Reply } from '../../../lib/domain/command.ts';
import { openAnswer } from '../../../lib/jetstream/forward-seal.ts';
import { isRedirect } from '../../../lib/jetstream/forwarding.ts';
import { testKeys } from '../cluster-secret.ts';
import { NAME } from './target.ts';

/** A forwarded request: 0xF2, key id (4), sealed at (8), nonce (16), HMAC (32), address length (1), address, payload. */
const ADDRESS_AT = 61;
const NONCE_AT = 13;
const NONCE_BYTES = 16;

export interface SealedBatch {
  readonly nonce: Buffer;
  /** The lease holder whose tenure it is addressed to. */
  readonly to: string;
  readonly payload: Buffer;
}

/** The parts of a sealed batch (its seal unchecked), or null when it has not the shape of one. */
export function sealedBatch(body: Buffer): SealedBatch | null {
  if (body.length <= ADDRESS_AT || body[0] !== 0xf2) return null;
  const end = ADDRESS_AT + 1 + body[ADDRESS_AT]!;
  if (end > body.length) return null;
  return { nonce: body.subarray(NONCE_AT, NONCE_AT + NONCE_BYTES), to: body.toString('utf8', ADDRESS_AT + 1, end), payload: body.subarray(end) };
}

/** The commands of a forwarded request's body (sealed or not), or null. */
export function commandsOf(body: Buffer): Command[] | null {
  const sealed = sealedBatch(body);
  for (const payload of sealed === null ? [body] : [sealed.payload, body]) {
    try {
      const v = deserialize(payload) as unknown;
      if (Array.isArray(v)) return v as Command[];
    } catch { /* not there */ }
  }
  return null;
}

/**
 * What the leader's first answer message to `request` says: nothing (the empty message: not
 * run); a redirect, sealed over the request's nonce (a node's batch for another tenure: not
 * run); the sealed replies of a batch that ran; or something not sealed over the nonce, which
 * no leader sends (taken as run: anything but the empty message or a redirect is).
 */
export type Answer =
  | { readonly kind: 'empty' }
  | { readonly kind: 'redirect'; readonly to: string }
  | { readonly kind: 'ran' }
  | { readonly kind: 'unsealed' };

export function readAnswer(request: Buffer, answer: Uint8Array): Answer {
  if (answer.length === 0) return { kind: 'empty' };
  const nonce = sealedBatch(request)?.nonce;
  const payload = nonce === undefined ? null : openAnswer(testKeys, NAME, Buffer.from(nonce), Buffer.from(answer));
  if (payload === null) return { kind: 'unsealed' };
  let v: unknown;
  try {
    v = deserialize(payload);
  } catch {
    return { kind: 'ran' }; // the first chunk of a long answer
  }
  return isRedirect(v) ? { kind: 'redirect', to: v.redirect } : { kind: 'ran' };
}

/** What a forger answers for a command: success, and for a GET a job that does not exist. */
export function forgedReply(c: Command): Reply {
  switch (c.op) {
    case 'job.get': return { ok: true, kind: 'job', job: { id: c.id, execution: 7n, status: 'planned' } };
    case 'job.list': return { ok: true, kind: 'jobs', jobs: [{ id: 'evil.forged', execution: 7n, status: 'planned' }], next: null };
    default: return { ok: true, kind: 'done' };
  }
}
