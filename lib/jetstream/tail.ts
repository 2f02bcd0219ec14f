// A follower's copy of the log: every message the stream gets after a given sequence, applied
// in order as it arrives (an ordered consumer: ephemeral, no acknowledgements, recreated by the
// client after a gap or a lost connection), so that taking over needs no replay.
//
// Caught up: the promotion must not start before everything up to the stream's last sequence
// L is applied. L may name a message that is gone (the journal purges a removal once it is
// acknowledged), so "applied >= L" is not the only way to be caught up: the consumer having
// nothing pending, with every message it delivered applied, is the other.
import { DeliverPolicy, type Consumer, type JetStreamClient } from '@nats-io/jetstream';
import type { LogRecord } from '../engine/journal.ts';
import type { Logger } from '../log.ts';
import { decodeMessage } from './replay.ts';

const RESTART_PAUSE_MS = 250;
const CATCH_UP_POLL_MS = 20;
const STOP_WAIT_MS = 2_000;
const PULL_EXPIRES_MS = 2_000;

export interface StreamTailOptions {
  readonly js: JetStreamClient;
  readonly stream: string;
  /** The last sequence already applied: the tail starts after it. */
  readonly afterSeq: number;
  readonly apply: (rec: LogRecord, seq: number) => void;
  readonly log: Logger;
}

export class StreamTail {
  private readonly o: StreamTailOptions;
  private appliedSeq: number;
  private stopped = false;
  private consumer: Consumer | null = null;
  private closeMessages: (() => Promise<void>) | null = null;
  private readonly running: Promise<void>;

  constructor(opts: StreamTailOptions) {
    this.o = opts;
    this.appliedSeq = opts.afterSeq;
    this.running = this.run();
  }

  /** The last stream sequence applied to the stores. */
  get applied(): number {
    return this.appliedSeq;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.follow();
      } catch (err) {
        if (this.stopped) return;
        this.o.log.warn({ err: (err as Error)?.message ?? String(err), applied: this.appliedSeq }, 'following the stream failed; starting again');
      }
      if (!this.stopped) await new Promise((r) => setTimeout(r, RESTART_PAUSE_MS));
    }
  }

  private async follow(): Promise<void> {
    const consumer = await this.o.js.consumers.get(this.o.stream, { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: this.appliedSeq + 1 });
    if (this.stopped) return;
    // Short pulls: a consumer whose server died is noticed (missed heartbeats) and made again
    // within seconds, not the default 30 s, which would hold a takeover that long.
    const messages = await consumer.consume({ max_messages: 1024, expires: PULL_EXPIRES_MS });
    this.consumer = consumer;
    this.closeMessages = async () => { await messages.close(); };
    try {
      for await (const m of messages) {
        if (this.stopped) break;
        if (m.seq <= this.appliedSeq) continue;
        this.o.apply(decodeMessage(this.o.stream, m.seq, m.subject, m.data), m.seq);
        this.appliedSeq = m.seq;
      }
    } finally {
      this.consumer = null;
      this.closeMessages = null;
      await messages.close().catch(() => {});
    }
  }

  /**
   * Resolves once every message up to `lastSeq` that still exists is applied; rejects when
   * `giveUp()` turns true first (the lease was lost meanwhile, a stop).
   */
  async caughtUp(lastSeq: number, giveUp: () => boolean): Promise<void> {
    for (;;) {
      if (this.appliedSeq >= lastSeq) return;
      if (giveUp()) throw new Error('gave up catching up with the stream');
      const consumer = this.consumer;
      if (consumer !== null) {
        const applied = this.appliedSeq;
        try {
          const ci = await consumer.info(true);
          if (ci.num_pending === 0 && ci.delivered.stream_seq <= applied && this.appliedSeq === applied) return;
        } catch { /* being recreated: look again */ }
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
