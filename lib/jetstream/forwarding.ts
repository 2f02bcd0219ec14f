// Commands of a follower's clients go to the leader (tickd(8) CLUSTER MODE): a follower sends
// each batch of normalized commands (the shapes the workers send over IPC) as one NATS request
// on the cluster's forwarding subject; the leader alone subscribes to it, runs the batch
// through its engine and answers once the batch is durable. Reads go the same way, so a
// client always reads its own writes.
//
// Wire: the request body is the v8 serialization of Command[] (bigints cross intact); the
// answer is the v8 serialization of Reply[] (or null: the request could not be read; or a
// Redirect: the batch was for another tenure and did not run, forward-seal.ts), cut
// into chunks below the server's max_payload, followed by an empty message (the requester's
// "sentinel" strategy), since a page of a listing may be larger than one NATS message.
//
// The follower's side is forward-client.ts, the leader's command-server.ts.
import type { NatsConnection } from '@nats-io/transport-node';
import type { Command, Reply } from '../domain/command.ts';

/** Room left in a NATS message for its headers and subject. */
const CHUNK_SLACK = 4096;

/** The subject only the leader listens on; outside the stream's `<cluster>.>` tree. */
export function forwardingSubject(cluster: string): string {
  return `$TICKD.${cluster}.forward`;
}

/** The answer to a batch addressed to another leader's tenure: not run; this is the leader now. */
export interface Redirect {
  readonly redirect: string;
}

export function isRedirect(v: unknown): v is Redirect {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && typeof (v as Redirect).redirect === 'string';
}

export type LocalBatch = (cmds: readonly Command[], done: (replies: Reply[]) => void) => void;

/** The largest chunk of an answer (and the largest request body): below the server's max_payload. */
export function chunkBytes(nc: NatsConnection): number {
  return Math.max(64 * 1024, (nc.info?.max_payload ?? 1024 * 1024) - CHUNK_SLACK);
}
