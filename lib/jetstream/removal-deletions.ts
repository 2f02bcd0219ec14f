// When the leader deletes a removal's message from the stream (journal.ts: removals do not
// stay). Not before a checkpoint covers it: a replay reads the checkpoint and then only the
// messages after it (checkpoint.ts), so it must find there every removal after the
// checkpoint; the leader holds the removals a new checkpoint reports. Not before every node
// has applied it either: a node that has applied a job's SET but not yet its removal would
// keep the job for good if the removal vanished first, since a consumer steps over a deleted
// message without a word, and would run it after taking over. So a removal is deleted only
// once every other node the cluster's nodes bucket lists has applied past it (members.ts),
// and no sooner than HOLD_MS after it was held: a node registers there before it reads the
// stream, and by then the leader has heard of it.
//
// What this leaves: a removal held when its leader is lost stays in the stream, one message,
// until the next leader's first checkpoint, made from the whole stream, reports it again
// (lib/leadership/checkpoint-schedule.ts), or its identifier is written again (replays apply it as a
// no-op). A node the leader may have stopped counting (its reports stopped for half the
// bucket's TTL: members.ts) rebuilds its copy before it may lead (lib/leadership/node.ts).
// Once the leader is fenced it deletes nothing more, but for the drain of a graceful stop.

const SWEEP_MS = 250;
export const HOLD_MS = 2_000;

export interface RemovalDeletionsOptions {
  /** Deletes the message; never rejects. */
  readonly deleteMessage: (seq: number) => Promise<void>;
  /** The lowest sequence every other node has applied (Infinity: no other node). */
  readonly appliedByOthers: () => number;
  readonly holdMs?: number;
}

export class RemovalDeletions {
  private readonly o: RemovalDeletionsOptions;
  private held: { readonly seq: number; readonly at: number }[] = [];
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private paused = false;

  constructor(opts: RemovalDeletionsOptions) {
    this.o = opts;
  }

  /** How many removals wait to be deleted. */
  get waiting(): number {
    return this.held.length;
  }

  /** The removal at `seq`, covered by a checkpoint, is to be deleted once no node can still need it. */
  hold(seq: number): void {
    if (this.closed) return;
    this.held.push({ seq, at: performance.now() });
    if (this.paused) return;
    this.timer ??= setInterval(() => this.sweep(), SWEEP_MS);
    this.timer.unref();
  }

  /** Deletes every removal held long enough (by `asOf`) and applied by every other node. */
  sweep(asOf = performance.now()): Promise<void>[] {
    const hold = this.o.holdMs ?? HOLD_MS;
    const upTo = this.o.appliedByOthers();
    const deletions: Promise<void>[] = [];
    this.held = this.held.filter((h) => {
      if (h.at + hold > asOf || h.seq > upTo) return true; // h.at + hold: the same sum as drain()'s
      deletions.push(this.o.deleteMessage(h.seq));
      return false;
    });
    if (this.held.length === 0) this.stopTimer();
    return deletions;
  }

  /** Deletes nothing on its own any more (the leader was fenced); drain() still may. */
  pause(): void {
    this.paused = true;
    this.stopTimer();
  }

  /**
   * At a graceful stop: waits out the hold of the removals no other node needs (HOLD_MS at
   * most) and deletes them.
   */
  async drain(): Promise<void> {
    const upTo = this.o.appliedByOthers();
    const youngest = this.held.reduce((at, h) => (h.seq <= upTo ? Math.max(at, h.at) : at), -Infinity);
    const over = youngest + (this.o.holdMs ?? HOLD_MS);
    const wait = over - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    // As of the end of the wait: a timer may fire a fraction of a millisecond early.
    await Promise.all(this.sweep(Math.max(over, performance.now())));
  }

  /** Deletes nothing more: what is still held stays in the stream. */
  close(): void {
    this.closed = true;
    this.held = [];
    this.stopTimer();
  }

  private stopTimer(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }
}
