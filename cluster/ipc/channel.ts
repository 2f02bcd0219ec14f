// Per-turn batching on both sides of the IPC channel (WorkerLink: the primary's replies to one
// worker; PrimaryLink: a worker's requests), and seq correlation on the worker side.
// Everything queued during one event-loop turn leaves as one message (setImmediate runs after
// the turn's I/O callbacks), so a pipelined burst of thousands of commands costs one
// serialization and one syscall, not thousands. A turn's batch is cut at MAX_BATCH entries, so
// no single message (and no single serialization buffer) grows with the number of clients.
import type { Command, Reply } from '../../lib/domain/command.ts';

/** Entries per IPC message at most; more in one turn leave as several messages. */
export const MAX_BATCH = 4096;

/**
 * When a batch leaves: `flush` runs once after the turn in which entries were added, or at
 * once when the batch reaches MAX_BATCH entries.
 */
export class TurnFlush {
  private scheduled = false;
  private readonly flush: () => void;

  constructor(flush: () => void) {
    this.flush = flush;
  }

  /** Entries were added; the batch holds `size` now. */
  added(size: number): void {
    if (size >= MAX_BATCH) return this.flush();
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.atTurnEnd);
  }

  private readonly atTurnEnd = (): void => {
    this.scheduled = false;
    this.flush();
  };
}

export class TurnBatcher<A, B> {
  private as: A[] = [];
  private bs: B[] = [];
  private readonly turn = new TurnFlush(() => this.flush());
  private readonly send: (as: A[], bs: B[]) => void;

  constructor(send: (as: A[], bs: B[]) => void) {
    this.send = send;
  }

  push(a: A, b: B): void {
    this.as.push(a);
    this.bs.push(b);
    this.turn.added(this.as.length);
  }

  flush(): void {
    if (this.as.length === 0) return;
    const as = this.as;
    const bs = this.bs;
    this.as = [];
    this.bs = [];
    this.send(as, bs);
  }
}

/** Primary side: the replies to one worker's batches, coalesced per turn into 'replies' messages. */
export class WorkerLink {
  private readonly out: TurnBatcher<number, Reply>;

  constructor(send: (seqs: number[], replies: Reply[]) => void) {
    this.out = new TurnBatcher(send);
  }

  reply(seqs: readonly number[], replies: readonly Reply[]): void {
    for (let i = 0; i < seqs.length; i++) this.out.push(seqs[i]!, replies[i]!);
  }
}

export type ReplyCallback = (reply: Reply) => void;

/** Worker side: request(cmd, cb) -> the primary's reply, in the order the primary gives it. */
export class PrimaryLink {
  private nextSeq = 1;
  private readonly waiting = new Map<number, ReplyCallback>();
  private readonly out: TurnBatcher<number, Command>;

  constructor(send: (seqs: number[], cmds: Command[]) => void) {
    this.out = new TurnBatcher(send);
  }

  request(cmd: Command, cb: ReplyCallback): void {
    const seq = this.nextSeq++;
    if (this.nextSeq > 0x7fffffff) this.nextSeq = 1;
    this.waiting.set(seq, cb);
    this.out.push(seq, cmd);
  }

  requestAsync(cmd: Command): Promise<Reply> {
    return new Promise((resolve) => this.request(cmd, resolve));
  }

  deliver(seqs: readonly number[], replies: readonly Reply[]): void {
    for (let i = 0; i < seqs.length; i++) {
      const cb = this.waiting.get(seqs[i]!);
      if (cb === undefined) continue;
      this.waiting.delete(seqs[i]!);
      cb(replies[i]!);
    }
  }
}
