// Commands of a follower's clients go to the leader (tickd(8) CLUSTER MODE): a follower sends
// each batch of normalized commands (the shapes the workers send over IPC) as one NATS request
// on the cluster's forwarding subject; the leader alone subscribes to it, runs the batch
// through its engine and answers once the batch is durable. Reads go the same way, so a
// client always reads its own writes.
//
// Wire: the request body is the v8 serialization of Command[] (bigints cross intact); the
// answer is the v8 serialization of Reply[] (or null: the request could not be read), cut
// into chunks below the server's max_payload, followed by an empty message (the requester's
// "sentinel" strategy), since a page of a listing may be larger than one NATS message.
//
// Retrying is safe only when nobody received the request: NATS says so with "no responders"
// (no leader subscribed: a failover). Those requests are sent again every RETRY_PAUSE_MS until
// the wait (longer than the lease TTL) runs out, oldest first and one at a time, with every
// later batch queued behind them: a batch sent in the instant a new leader subscribes can
// still overtake one that found none, but no batch sent after that. A request that some node
// received but that got no answer in time is never sent again (it may have been applied):
// ERROR internal.
import { serialize, deserialize } from 'node:v8';
import { NoRespondersError, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import type { Command, Reply } from '../domain/command.ts';
import { internal } from '../errors.ts';
import type { Logger } from '../log.ts';

const RETRY_PAUSE_MS = 100;
/** Room left in a NATS message for its headers and subject. */
const CHUNK_SLACK = 4096;

/** The subject only the leader listens on; outside the stream's `<cluster>.>` tree. */
export function forwardingSubject(cluster: string): string {
  return `$TICKD.${cluster}.forward`;
}

export interface ForwardClientOptions {
  readonly nc: NatsConnection;
  readonly subject: string;
  /** How long a batch waits for a leader to appear (longer than the lease TTL). */
  readonly noLeaderWaitMs: number;
  /** How long a leader may take to answer a batch it received (a durable write, retries included). */
  readonly answerWaitMs: number;
  readonly log: Logger;
}

interface Batch {
  readonly body: Uint8Array;
  readonly n: number;
  /** Until when it may wait for a leader. */
  readonly deadline: number;
  readonly done: (replies: Reply[]) => void;
}

const NO_LEADER = Symbol('no leader');

export class ForwardClient {
  private readonly o: ForwardClientOptions;
  private readonly chunk: number;
  /**
   * Batches that found no leader, in the order they were sent, re-sent one at a time; while
   * any waits, later batches queue behind it, so that none overtakes an earlier one.
   */
  private stalled: Batch[] = [];

  constructor(opts: ForwardClientOptions) {
    this.o = opts;
    this.chunk = chunkBytes(opts.nc);
  }

  /** Forwards a batch; `done` gets one reply per command, in order, always exactly once. */
  forward(cmds: readonly Command[], done: (replies: Reply[]) => void): void {
    const body = serialize(cmds);
    if (body.length > this.chunk && cmds.length > 1) {
      // Halves, sent in order (NATS keeps one connection's order), answered together.
      const mid = cmds.length >> 1;
      const parts: Reply[][] = [];
      let left = 2;
      const join = (k: number) => (r: Reply[]) => {
        parts[k] = r;
        if (--left === 0) done([...parts[0]!, ...parts[1]!]);
      };
      this.forward(cmds.slice(0, mid), join(0));
      this.forward(cmds.slice(mid), join(1));
      return;
    }
    if (body.length > this.chunk) {
      this.o.log.warn({ bytes: body.length }, 'a command too large to forward to the leader');
      done([internal()]);
      return;
    }
    const batch: Batch = { body, n: cmds.length, deadline: performance.now() + this.o.noLeaderWaitMs, done };
    if (this.stalled.length > 0) {
      this.stalled.push(batch);
      return;
    }
    void this.once(batch).then((r) => {
      if (r !== NO_LEADER) return done(r);
      this.stalled.push(batch);
      if (this.stalled.length === 1) void this.drain();
    });
  }

  /** Sends the stalled batches again, oldest first, each until it is answered or its wait is over. */
  private async drain(): Promise<void> {
    while (this.stalled.length > 0) {
      const head = this.stalled[0]!;
      const r = await this.once(head);
      if (r === NO_LEADER && performance.now() <= head.deadline) {
        await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS));
        continue;
      }
      this.stalled.shift();
      if (r === NO_LEADER) this.o.log.warn('no leader to forward to in time; answered ERROR internal');
      head.done(r === NO_LEADER ? failed(head.n) : r);
    }
  }

  /** One request: the replies, ERROR internal for each command, or NO_LEADER (nobody received it). */
  private async once(b: Batch): Promise<Reply[] | typeof NO_LEADER> {
    try {
      const answer = await this.o.nc.requestMany(this.o.subject, b.body, { strategy: 'sentinel', maxWait: this.o.answerWaitMs });
      const chunks: Uint8Array[] = [];
      for await (const m of answer) if (m.data.length > 0) chunks.push(m.data);
      if (chunks.length === 0) return failed(b.n); // maxWait passed: it may have been applied
      const replies = deserialize(Buffer.concat(chunks)) as Reply[] | null;
      return Array.isArray(replies) && replies.length === b.n ? replies : failed(b.n);
    } catch (err) {
      if (err instanceof NoRespondersError) return NO_LEADER;
      this.o.log.warn({ err: (err as Error)?.message ?? String(err) }, 'forwarding to the leader failed; answered ERROR internal');
      return failed(b.n);
    }
  }
}

function failed(n: number): Reply[] {
  return Array.from({ length: n }, () => internal());
}

export type LocalBatch = (cmds: readonly Command[], done: (replies: Reply[]) => void) => void;

/** The leader's side: answers forwarded batches through its own engine until stop(). */
export class CommandServer {
  private readonly sub: Subscription;

  constructor(nc: NatsConnection, subject: string, run: LocalBatch, log: Logger) {
    const chunk = chunkBytes(nc);
    this.sub = nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err !== null) return;
        let cmds: Command[] | null = null;
        try {
          const v = deserialize(msg.data) as unknown;
          if (Array.isArray(v)) cmds = v as Command[];
        } catch { /* answered null below */ }
        const answer = (replies: Reply[] | null): void => {
          try {
            const body = serialize(replies);
            for (let at = 0; at < body.length; at += chunk) msg.respond(body.subarray(at, at + chunk));
            msg.respond(new Uint8Array(0));
          } catch (e) {
            log.warn({ err: (e as Error)?.message }, 'answering a forwarded batch failed');
          }
        };
        if (cmds === null) {
          log.warn('a forwarded batch that is not a list of commands; answered with nothing');
          answer(null);
          return;
        }
        run(cmds, answer);
      },
    });
  }

  /**
   * No more batches are taken; those already delivered to this process are still run and
   * answered (a plain unsubscribe would drop them, leaving their senders waiting in vain).
   */
  stop(): void {
    void this.sub.drain().catch(() => {});
  }
}

function chunkBytes(nc: NatsConnection): number {
  return Math.max(64 * 1024, (nc.info?.max_payload ?? 1024 * 1024) - CHUNK_SLACK);
}
