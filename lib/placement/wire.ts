// The wire of execution placement (tickd(8) CLUSTER MODE "Where jobs run"). Three exchanges,
// each a NATS request sealed with the cluster's key (lib/jetstream/forward-seal.ts) under a
// context of its own, so that no message of one kind passes for another, and each answered
// sealed over the request's nonce, in chunks below the server's max_payload with an empty
// message last (as forwarding does, lib/jetstream/forwarding.ts):
//
//   run      leader -> `$TICKD.<cluster>.exec.<node>`, addressed to that node's process
//            (`<node>/<run>`, the run its reports name: executorAddress): executions for it to
//            run. Answer: { taken: n }. A copy sent to the node's next process is misaddressed,
//            so a run copied off NATS never runs twice, whatever restarts.
//   census   leader -> the same subject: the attempts the node runs, or ran and whose results
//            no leader took yet (a new leader adopts them instead of running them again).
//   results  node -> `$TICKD.<cluster>.results` (only a leader listens): results. Answer: the
//            attempts taken.
//
// Payloads are v8 serializations (bigints cross intact), read through a shape check: a sealed
// message comes from a node, but maybe from a node of another version. A request whose seal
// does not verify, or addressed to another node, or a copy of one seen before, is not acted on
// and gets an empty answer; the refusals are logged at most once a second.
import { deserialize, serialize } from 'node:v8';
import { NoRespondersError, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import type { ClusterKeys } from '../jetstream/cluster-keys.ts';
import { NonceBook, openAnswer, openRequest, sealAnswer, sealRequest } from '../jetstream/forward-seal.ts';
import { chunkBytes } from '../jetstream/forwarding.ts';
import type { Logger } from '../log.ts';
import { errorText } from '../errors.ts';

export const EXEC_CONTEXT = Buffer.from('tickd/exec/1\0', 'latin1');
export const RESULTS_CONTEXT = Buffer.from('tickd/results/1\0', 'latin1');
export const ANSWER_CONTEXT = Buffer.from('tickd/exec-answer/1\0', 'latin1');

export function execSubject(cluster: string, node: string): string {
  return `$TICKD.${cluster}.exec.${node}`;
}

/** What a run or census is addressed to: one process of node `node` (ExecutorView.run). */
export function executorAddress(node: string, run: string | undefined): string {
  return `${node}/${run ?? ''}`;
}

export function resultsSubject(cluster: string): string {
  return `$TICKD.${cluster}.results`;
}

export interface WireParts {
  readonly nc: NatsConnection;
  readonly keys: ClusterKeys;
  readonly cluster: string;
  readonly log: Logger;
}

/** Nobody listens on the subject: the request was received by no one, so it may go elsewhere. */
export const NOBODY = Symbol('nobody');
/** No answer in time (or an unreadable one): the request may have been acted on. */
export const NO_ANSWER = Symbol('no answer');

/** A payload serialized once: to see whether it fits one request, then to send it. */
export class Encoded {
  readonly bytes: Buffer;
  readonly fits: boolean;
  constructor(bytes: Buffer, fits: boolean) {
    this.bytes = bytes;
    this.fits = fits;
  }
}

/** `payload` serialized, and whether it fits one request (else the caller splits it). */
export function encode(w: WireParts, payload: unknown): Encoded {
  const bytes = serialize(payload);
  return new Encoded(bytes, bytes.length <= chunkBytes(w.nc));
}

/** One sealed request (a payload, or one encode() made) and its opened answer. Never rejects. */
export async function ask(w: WireParts, subject: string, to: string, context: Buffer, payload: unknown, maxWaitMs: number): Promise<unknown> {
  const bytes = payload instanceof Encoded ? payload.bytes : serialize(payload);
  const sealed = sealRequest(w.keys, w.cluster, to, bytes, Date.now(), context);
  try {
    const answer = await w.nc.requestMany(subject, sealed.body, { strategy: 'sentinel', maxWait: maxWaitMs });
    const chunks: Uint8Array[] = [];
    for await (const m of answer) if (m.data.length > 0) chunks.push(m.data);
    if (chunks.length === 0) return NO_ANSWER;
    const opened = openAnswer(w.keys, w.cluster, sealed.nonce, Buffer.concat(chunks), ANSWER_CONTEXT);
    return opened === null ? NO_ANSWER : deserialize(opened);
  } catch (err) {
    if (err instanceof NoRespondersError) return NOBODY;
    w.log.debug({ err: errorText(err), subject }, 'a placement request failed');
    return NO_ANSWER;
  }
}

/** `sealedAt`: when the request was sealed, ms since the epoch by its sender's clock. */
export type Handler = (payload: unknown, answer: (v: unknown) => void, sealedAt: number) => void;

/** Serves the sealed requests addressed to `address` on `subject` until the subscription ends. */
export function serve(w: WireParts, subject: string, address: string, context: Buffer, handle: Handler): Subscription {
  const nonces = new NonceBook();
  const chunk = chunkBytes(w.nc);
  const empty = new Uint8Array(0);
  let refusedAt = 0;
  let unsaid = 0;
  return w.nc.subscribe(subject, {
    callback: (err, msg) => {
      if (err !== null) return;
      const opened = openRequest(w.keys, w.cluster, address, msg.data, nonces, Date.now(), context);
      let payload: unknown;
      let why: string | null = null;
      if ('refused' in opened) why = opened.refused;
      else if ('misaddressed' in opened) why = `addressed to "${opened.misaddressed.slice(0, 64)}"`;
      else {
        try {
          payload = deserialize(opened.payload);
        } catch {
          why = 'a payload that is not readable';
        }
      }
      if (why !== null || !('payload' in opened)) {
        const now = Date.now();
        if (now - refusedAt >= 1000) {
          w.log.warn({ subject, why, more: unsaid }, 'a placement message that is no node\'s: not acted on');
          refusedAt = now;
          unsaid = 0;
        } else unsaid++;
        try { msg.respond(empty); } catch { /* no reply subject */ }
        return;
      }
      const sealedAt = opened.sealedAt;
      handle(payload, (v) => {
        try {
          const body = sealAnswer(w.keys, w.cluster, opened.nonce, serialize(v), ANSWER_CONTEXT);
          for (let at = 0; at < body.length; at += chunk) msg.respond(body.subarray(at, at + chunk));
          msg.respond(empty);
        } catch (e) {
          w.log.warn({ err: errorText(e) }, 'answering a placement request failed');
        }
      }, sealedAt);
    },
  });
}
