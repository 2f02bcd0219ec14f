// A follower's side of forwarding (forwarding.ts): each batch of its clients' commands goes
// to the leader as one NATS request, and its answer comes back to the client.
//
// Retrying is safe only when nobody received the request: NATS says so with "no responders"
// (no leader subscribed: a failover). Those requests are sent again every RETRY_PAUSE_MS until
// the wait (longer than the lease TTL) runs out, oldest first and one at a time, with every
// later batch queued behind them: a batch sent in the instant a new leader subscribes can
// still overtake one that found none, but no batch sent after that. A request that some node
// received but that got no answer in time is never sent again (it may have been applied):
// ERROR internal.
import { serialize, deserialize } from 'node:v8';
import { NoRespondersError, type NatsConnection } from '@nats-io/transport-node';
import type { Command, Reply } from '../domain/command.ts';
import { errorText, internal } from '../errors.ts';
import type { Logger } from '../log.ts';
import { chunkBytes } from './forwarding.ts';

const RETRY_PAUSE_MS = 100;

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
      this.o.log.warn({ err: errorText(err) }, 'forwarding to the leader failed; answered ERROR internal');
      return failed(b.n);
    }
  }
}

function failed(n: number): Reply[] {
  return Array.from({ length: n }, () => internal());
}
