// A follower's side of forwarding (forwarding.ts): each batch of its clients' commands goes
// to the leader as one NATS request, and its answer comes back to the client. Each attempt is
// sealed with the cluster's key and addressed to the tenure of the lease holder this node
// heard of (forward-seal.ts); a leader that holds the lease under another tenure redirects it
// unrun, and it is sent again at once. An answer whose seal does not verify (not the
// leader's) is ERROR internal.
//
// Retrying is safe only when nobody received the request: NATS says so with "no responders"
// (no leader subscribed: a failover). Those requests are sent again every RETRY_PAUSE_MS until
// the wait (longer than the lease TTL) runs out, oldest first and one at a time, with every
// later batch queued behind them: a batch sent in the instant a new leader subscribes can
// still overtake one that found none, but no batch sent after that. A request that some node
// received but that got no answer in time is never sent again (it may have been applied):
// ERROR internal.
//
// A leader that dies holding a batch never answers it, and the client's connection answers in
// order: every later command would wait behind it for answerWaitMs. So the node says when the
// leader changed (it took the lease, or saw another holder of it: lib/leadership/node.ts), and
// leaderChanged() ends the wait of every request sent before: ERROR internal at once, since the
// old leader can no longer write, so the outcome is decided, though not known here (the
// stream does not say which records were whose batch). A request sent in the last
// LATE_SEND_GRACE_MS before the change keeps its wait until that much after it was sent: it may
// be on its way to nobody (no responders: sent again, as above) or to the new leader (the node
// learns of the change a moment after it may start answering). Only a change of holder ends a
// wait: a leader that is merely slow keeps every request it holds until answerWaitMs.
//
// Invariant: `done` is called exactly once per batch: each request ends once, by its answer or
// by the change, whichever comes first; the other is ignored.
import { serialize, deserialize } from 'node:v8';
import { NoRespondersError, type NatsConnection } from '@nats-io/transport-node';
import type { Command, Reply } from '../domain/command.ts';
import { errorText, internal } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { ClusterKeys } from './cluster-keys.ts';
import { addressable, openAnswer, sealRequest } from './forward-seal.ts';
import { chunkBytes, isRedirect } from './forwarding.ts';

const RETRY_PAUSE_MS = 100;
/** A request sent this recently before a change of leader is not ended by it until this old. */
const LATE_SEND_GRACE_MS = 250;

export interface ForwardClientOptions {
  readonly nc: NatsConnection;
  readonly subject: string;
  /** How long a batch waits for a leader to appear (longer than the lease TTL). */
  readonly noLeaderWaitMs: number;
  /** How long a leader may take to answer a batch it received (a durable write, retries included). */
  readonly answerWaitMs: number;
  readonly log: Logger;
  /** The cluster's name and keys: what seals a batch and verifies its answer (forward-seal.ts). */
  readonly cluster: string;
  readonly keys: ClusterKeys;
}

interface Batch {
  readonly body: Uint8Array;
  readonly n: number;
  /** Until when it may wait for a leader. */
  readonly deadline: number;
  readonly done: (replies: Reply[]) => void;
}

const NO_LEADER = Symbol('no leader');
/** The leader answered that the batch was for another tenure: it did not run. */
const REDIRECTED = Symbol('redirected');
const MAX_REDIRECTS = 4;

/** A request on its way, whose wait a change of leader ends (leaderChanged). */
interface Waiting {
  readonly sentAt: number;
  /** Set once it is answered or its wait ended: whatever comes after is ignored. */
  over: boolean;
  /** Ends the NATS request (set once the request exists). */
  stop: (() => void) | null;
  /** Ends the wait: the request is answered ERROR internal now. */
  readonly end: () => void;
}

export class ForwardClient {
  private readonly o: ForwardClientOptions;
  private readonly chunk: number;
  /**
   * Batches that found no leader, in the order they were sent, re-sent one at a time; while
   * any waits, later batches queue behind it, so that none overtakes an earlier one.
   */
  private stalled: Batch[] = [];
  /** Requests sent and not answered yet (once()). */
  private readonly waiting = new Set<Waiting>();
  /** The lease holder whose tenure batches are addressed to ('' before one is known). */
  private to = '';

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

  /** The lease holder as this node hears of it (the lease key): later batches are addressed to its tenure. */
  heard(holder: string): void {
    this.to = addressable(holder) ? holder : ''; // anyone may write the lease key: never trusted, only addressed
  }

  /**
   * The leader changed: every request sent before now stops waiting for its answer and is
   * answered ERROR internal (one sent in the last LATE_SEND_GRACE_MS, once it is that old and
   * still unanswered); the batches queued behind them go on. The count of requests ended or
   * about to be.
   */
  leaderChanged(): number {
    const now = performance.now();
    const ending = [...this.waiting];
    let young = 0;
    for (const w of ending) {
      if (now - w.sentAt >= LATE_SEND_GRACE_MS) {
        w.end();
        continue;
      }
      young++;
      setTimeout(w.end, w.sentAt + LATE_SEND_GRACE_MS - now).unref();
    }
    if (ending.length > 0) {
      this.o.log.warn({ requests: ending.length - young, sentJustBefore: young },
        'the leader changed: forwarded batches still waiting for an answer are answered ERROR internal');
    }
    return ending.length;
  }

  /** One request: the replies, ERROR internal for each command, or NO_LEADER (nobody received it). */
  private async once(b: Batch): Promise<Reply[] | typeof NO_LEADER> {
    const ended = Promise.withResolvers<Reply[]>();
    const w: Waiting = {
      sentAt: performance.now(),
      over: false,
      stop: null,
      end: () => {
        if (w.over) return;
        w.over = true;
        w.stop?.();
        ended.resolve(failed(b.n));
      },
    };
    this.waiting.add(w);
    try {
      return await Promise.race([this.request(b, w), ended.promise]);
    } finally {
      w.over = true;
      this.waiting.delete(w);
    }
  }

  /**
   * The request proper; once `w` is over (its wait ended), what it returns is not used. A
   * redirect (the batch was for another tenure, and did not run) is followed at once, a few
   * times at most: the lease can change hands only so fast.
   */
  private async request(b: Batch, w: Waiting): Promise<Reply[] | typeof NO_LEADER> {
    for (let hop = 0; hop < MAX_REDIRECTS; hop++) {
      const r = await this.requestOnce(b, w);
      if (r !== REDIRECTED) return r;
      if (w.over) return failed(b.n);
    }
    this.o.log.warn({ leader: this.to }, 'forwarded batches keep being redirected; answered ERROR internal');
    return failed(b.n);
  }

  private async requestOnce(b: Batch, w: Waiting): Promise<Reply[] | typeof NO_LEADER | typeof REDIRECTED> {
    // Sealed anew for each attempt (forward-seal.ts): a batch that waited for a leader is still
    // fresh, and is addressed to the tenure this node knows of now.
    const sealed = sealRequest(this.o.keys, this.o.cluster, this.to, b.body);
    try {
      const answer = await this.o.nc.requestMany(this.o.subject, sealed.body, { strategy: 'sentinel', maxWait: this.o.answerWaitMs });
      w.stop = (): void => { (answer as { stop?: () => void }).stop?.(); };
      if (w.over) {
        w.stop();
        return failed(b.n);
      }
      const chunks: Uint8Array[] = [];
      for await (const m of answer) if (m.data.length > 0) chunks.push(m.data);
      if (w.over) return failed(b.n); // its wait ended: what had come of the answer is not looked at
      if (chunks.length === 0) return failed(b.n); // maxWait passed (it may have been applied), or refused
      const payload = openAnswer(this.o.keys, this.o.cluster, sealed.nonce, Buffer.concat(chunks));
      if (payload === null) {
        this.o.log.warn('an answer to a forwarded batch that is not the leader\'s (its seal does not verify); answered ERROR internal');
        return failed(b.n);
      }
      const replies = deserialize(payload) as unknown;
      if (isRedirect(replies)) {
        this.heard(replies.redirect);
        return REDIRECTED;
      }
      return Array.isArray(replies) && replies.length === b.n ? replies as Reply[] : failed(b.n);
    } catch (err) {
      if (err instanceof NoRespondersError) return NO_LEADER;
      if (w.over) return failed(b.n);
      this.o.log.warn({ err: errorText(err) }, 'forwarding to the leader failed; answered ERROR internal');
      return failed(b.n);
    }
  }
}

function failed(n: number): Reply[] {
  return Array.from({ length: n }, () => internal());
}
