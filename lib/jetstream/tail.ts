// A follower's copy of the log: every message the stream gets after a given sequence, applied
// in order as it arrives (an ordered consumer: ephemeral, no acknowledgements, recreated by the
// client after a gap or a lost connection), so that taking over needs no replay.
//
// Caught up: the promotion must not start before everything up to the stream's last sequence
// L is applied. L may name a message that is gone (the journal deletes a removal once it is
// acknowledged), so "applied >= L" is not the only way to be caught up: the consumer having
// nothing pending, with every message it delivered applied, is the other, once the stream's
// leader confirms that no message is left up to L (nextSeqOnLeader): the consumer's server
// may be one that came back and is still catching up, whose "nothing pending" is about its
// own copy (wire/stream-scan.ts met that in a replay).
import { DeliverPolicy, type Consumer, type JetStreamClient, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import type { LogRecord } from '../engine/journal.ts';
import type { Logger } from '../log.ts';
import { readMessage, StreamTooNewError, type StreamTrust } from './quarantine.ts';
import { nextSeqOnLeader } from './stream.ts';
import { errorText } from '../errors.ts';

const RESTART_PAUSE_MS = 250;
const CATCH_UP_POLL_MS = 20;
const STALLED_MS = 1_000;
const STOP_WAIT_MS = 2_000;
const PULL_EXPIRES_MS = 2_000;

export interface StreamTailOptions {
  readonly js: JetStreamClient;
  /** Asks the stream's leader whether a message is left (caughtUp). */
  readonly jsm: JetStreamManager;
  readonly stream: string;
  /** The last sequence already applied: the tail starts after it. */
  readonly afterSeq: number;
  /** Nothing was written to the stream while the copy was built: the tail starts at its end. */
  readonly atEnd?: boolean;
  readonly apply: (rec: LogRecord, seq: number) => void;
  /** What is a record of the cluster's, and where the rest goes (quarantine.ts). */
  readonly trust: StreamTrust;
  readonly log: Logger;
  /** A record too new for this code was met (quarantine.ts): the tail has stopped before it, for good. */
  readonly tooNew: (err: StreamTooNewError) => void;
}

export class StreamTail {
  private readonly o: StreamTailOptions;
  private appliedSeq: number;
  private stopped = false;
  /** Set when a record too new for this code stopped the tail: nothing after it is applied. */
  private halted: StreamTooNewError | null = null;
  private consumer: Consumer | null = null;
  private closeMessages: (() => Promise<void>) | null = null;
  /**
   * Whether the tail has taken a message with nothing after it since the copy was built (or
   * nothing came while it was: options.atEnd). Until then it reads what came during the
   * replay: a record a foreign message pushed out then was never read, so the copy cannot
   * speak for what such a message pushed out (quarantine.ts).
   */
  private reachedEnd = false;
  /** The last message taken from the stream (its consumer and delivery sequence count). */
  private lastTaken: JsMsg | null = null;
  /** Which follow loop may apply: a loop left behind by restart() applies nothing more. */
  private generation = 0;
  private running: Promise<void>;

  constructor(opts: StreamTailOptions) {
    this.o = opts;
    this.appliedSeq = opts.afterSeq;
    this.reachedEnd = opts.atEnd === true;
    this.running = this.run(this.generation);
  }

  /** The last stream sequence applied to the stores. */
  get applied(): number {
    return this.appliedSeq;
  }

  private current(generation: number): boolean {
    return !this.stopped && generation === this.generation;
  }

  private async run(generation: number): Promise<void> {
    while (this.current(generation)) {
      try {
        await this.follow(generation);
      } catch (err) {
        if (!this.current(generation)) return;
        if (err instanceof StreamTooNewError) {
          this.halted = err;
          this.o.tooNew(err);
          return;
        }
        this.o.log.warn({ err: errorText(err), applied: this.appliedSeq }, 'following the stream failed; starting again');
      }
      if (this.current(generation)) await new Promise((r) => setTimeout(r, RESTART_PAUSE_MS));
    }
  }

  /**
   * Leaves the consumer and its loop behind (they may never end: see caughtUp) and follows
   * again from the last sequence applied, with a new one.
   */
  private restart(): void {
    const close = this.closeMessages;
    const abandoned = this.consumer;
    this.consumer = null;
    this.closeMessages = null;
    const generation = ++this.generation;
    void close?.().catch(() => {});
    // Else it stays on the server until its inactivity limit. delete() throws at once on a
    // consumer not made yet.
    void Promise.resolve().then(() => abandoned?.delete()).catch(() => {});
    this.running = this.run(generation);
  }

  private async follow(generation: number): Promise<void> {
    const consumer = await this.o.js.consumers.get(this.o.stream, { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: this.appliedSeq + 1 });
    if (!this.current(generation)) return;
    // Short pulls: a consumer whose server died is noticed (missed heartbeats) and made again
    // within seconds, not the default 30 s, which would hold a takeover that long.
    const messages = await consumer.consume({ max_messages: 1024, expires: PULL_EXPIRES_MS });
    if (!this.current(generation)) {
      await messages.close().catch(() => {});
      return;
    }
    this.consumer = consumer;
    this.closeMessages = async () => { await messages.close(); };
    try {
      for await (const m of messages) {
        if (!this.current(generation)) break;
        const behind = !this.reachedEnd;
        if (m.info.pending === 0) this.reachedEnd = true;
        if (m.seq > this.appliedSeq) {
          const rec = readMessage(this.o.trust, this.o.stream, m.subject, m.seq, m.data, behind);
          if (rec !== null) this.o.apply(rec, m.seq);
          this.appliedSeq = m.seq;
        }
        this.lastTaken = m;
      }
    } finally {
      if (generation === this.generation) {
        this.consumer = null;
        this.closeMessages = null;
      }
      await messages.close().catch(() => {});
    }
  }

  /**
   * Resolves once every message up to `lastSeq` that still exists is applied; rejects when
   * `giveUp()` turns true first (the lease was lost meanwhile, a stop). A consumer that
   * delivers nothing for STALLED_MS while the stream has more is left for a new one: the
   * client's ordered consumer was seen to stay silent for good, its iterator never ending,
   * after this process had been stopped (SIGSTOP) for a few seconds while the stream grew.
   */
  async caughtUp(lastSeq: number, giveUp: () => boolean): Promise<void> {
    let moved = { applied: this.appliedSeq, at: performance.now(), consumer: this.consumer };
    let stalledMs = STALLED_MS;
    for (;;) {
      if (this.appliedSeq >= lastSeq) return;
      if (this.halted !== null) throw this.halted;
      if (giveUp()) throw new Error('gave up catching up with the stream');
      const applied = this.appliedSeq;
      const consumer = this.consumer;
      // Silence counts only from when a consumer is there: making one may take seconds (a
      // JetStream leader being elected).
      if (applied !== moved.applied || consumer !== moved.consumer || consumer === null) moved = { applied, at: performance.now(), consumer };
      if (consumer !== null) {
        try {
          // Asked of the server: info(true) would be the client's copy from when the consumer
          // was made, which says "nothing pending" for one made on a stream that grew since.
          const ci = await consumer.info();
          // Everything it delivered is taken: its delivered *stream* sequence says nothing
          // here, as a consumer steps over deleted messages (a removal's) without a delivery.
          const nothingYet = ci.delivered.consumer_seq === 0 && (ci.config.opt_start_seq ?? Infinity) <= applied + 1;
          const taken = this.lastTaken?.info;
          const allTaken = taken !== undefined && ci.name === taken.consumer && ci.delivered.consumer_seq <= taken.deliverySequence;
          if (ci.num_pending === 0 && (nothingYet || allTaken) && this.appliedSeq === applied) {
            const next = await nextSeqOnLeader(this.o.jsm, this.o.stream, applied + 1);
            if ((next === null || next > lastSeq) && this.appliedSeq === applied) return;
          }
        } catch { /* being recreated: look again */ }
      }
      if (performance.now() - moved.at > stalledMs) {
        this.o.log.warn({ applied, lastSeq }, 'the stream\'s consumer delivers nothing; making it again');
        this.restart();
        stalledMs *= 2;
        moved = { applied, at: performance.now(), consumer: null };
      }
      await new Promise((r) => setTimeout(r, CATCH_UP_POLL_MS));
    }
  }

  /** Stops following; nothing is applied once this resolves. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.closeMessages?.().catch(() => {});
    // Nothing is applied after `stopped`; a follow() stuck on an unreachable NATS may take its time.
    await Promise.race([this.running, new Promise((r) => setTimeout(r, STOP_WAIT_MS).unref())]);
  }
}
