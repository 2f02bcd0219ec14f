// The Journal (lib/engine/journal.ts) on the cluster's stream: the same records, the same
// payload bytes as a logfile frame's, one subject per identifier (subjects.ts).
//
// Theory:
// - Durable before the reply: append() encodes and queues; flush() publishes everything queued
//   at once (pipelined) and resolves when JetStream has acknowledged every one of them, which
//   with R3 means a majority of servers stored it. The engine replies only then.
// - Fenced: tickd is the stream's single writer, so every publish says which sequence it must
//   follow (Nats-Expected-Last-Sequence): the k-th message published since the last known
//   sequence S expects S + k - 1.
// - Riding out a NATS server's loss: publishes go out pipelined; when one fails (a timeout,
//   a server gone, a stream leader being elected), everything from it on is published again
//   one by one, in order, each after the one before it is acknowledged, with the same
//   expected sequence and the same message id (Nats-Msg-Id: the server answers a copy it
//   already stored as a duplicate, with its sequence), until PUBLISH_DEADLINE_MS has passed.
//   A refusal for the expected sequence when everything before is acknowledged means another
//   node wrote: this one is not the leader. That, or the deadline passing, fences the journal
//   for good: append() throws and flush() rejects (the engine rolls back and answers ERROR
//   internal), and onFenced tells the primary once, so it stops firing at once.
// - Removals do not stay: the removal acknowledged at sequence S is deleted (the stream kept
//   only it of its subject) once a checkpoint covers it (lib/leadership/checkpoint-schedule.ts hands
//   its removals to holdRemovals) and every node has applied it (removal-deletions.ts), so a
//   stream of churning identifiers does not grow with dead ones. Without a view of the other
//   nodes (`tickd import`, every node stopped) at once.
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { alreadyGone } from './api-errors.ts';
import type { Logger } from '../log.ts';
import { encodeRecord, FRAME_HEADER_BYTES } from '../logfile/codec.ts';
import { NotWritingError, type Journal, type LogRecord } from '../engine/journal.ts';
import { isWrongLastSequence as wrongLastSequence } from '../lease/errors.ts';
import type { ClusterKeys } from './cluster-keys.ts';
import { sealRecord } from './record-seal.ts';
import { RemovalDeletions } from './removal-deletions.ts';
import type { ClusterSubjects } from './subjects.ts';
import { errorText } from '../errors.ts';

/** How long one write may take to be acknowledged, retries included, before the node gives up. */
export const PUBLISH_DEADLINE_MS = 10_000;
const ATTEMPT_TIMEOUT_MS = 2_000;
const RETRY_PAUSE_MS = 100;

export interface StreamJournalOptions {
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly subjects: ClusterSubjects;
  /** The stream's last sequence when this node starts writing. */
  readonly lastSeq: number;
  /** Unique to this writer (node, pid, a random part): with the sequence, each message's id. */
  readonly writerId: string;
  readonly log: Logger;
  /** Once, when the journal stops accepting writes for good (the node is not the leader). */
  readonly onFenced: (why: string) => void;
  /**
   * Asked before each flush: false once this node's claim on the lease ran out by its own
   * clock (a process resumed after a pause), so not even one write leaves it after that.
   */
  readonly mayWrite?: () => boolean;
  /**
   * The lowest sequence every other node of the cluster has applied: a removal handed to
   * holdRemovals is deleted only once they all have (removal-deletions.ts). Absent: a removal
   * is deleted as soon as it is acknowledged (`tickd import`, which runs with every node
   * stopped, into a stream no checkpoint covers).
   */
  readonly appliedByOthers?: () => number;
  /** Seals every record (record-seal.ts): the cluster's keys. */
  readonly keys: ClusterKeys;
  /** Each record once acknowledged, by its subject and sequence: the copy now speaks for that subject (quarantine-book.ts). */
  readonly written?: (subject: string, seq: number) => void;
}

interface Queued {
  readonly subject: string;
  readonly payload: Uint8Array;
  readonly removal: boolean;
}

export class StreamJournal implements Journal {
  private readonly o: StreamJournalOptions;
  private queued: Queued[] = [];
  /** The sequence the next publish must follow. */
  private expected: number;
  private fencedWhy: string | null = null;
  /**
   * Set when a write was refused for its expected sequence with every write before it
   * acknowledged: the sequence of that last acknowledged write. After it there is a foreign
   * message or another writer's record (restore.ts tells which).
   */
  private foreignAfterSeq: number | null = null;
  private readonly inFlight = new Set<Promise<unknown>>();
  /** Settles when every flush so far has: a flush's retries wait for the ones before it. */
  private tail: Promise<void> = Promise.resolve();
  /** Batches being published again after a failure: while any is, the leader fires nothing. */
  private recovering = 0;
  private readonly removals: RemovalDeletions | null;

  constructor(opts: StreamJournalOptions) {
    this.o = opts;
    this.expected = opts.lastSeq;
    const { appliedByOthers } = opts;
    this.removals = appliedByOthers === undefined ? null : new RemovalDeletions({
      appliedByOthers,
      deleteMessage: (seq) => this.deleteRemoval(seq),
    });
  }

  get fenced(): boolean {
    return this.fencedWhy !== null;
  }

  get writerId(): string {
    return this.o.writerId;
  }

  /** Where someone else wrote after this node's last acknowledged write (it is fenced then), or null. */
  get foreignAfter(): number | null {
    return this.foreignAfterSeq;
  }

  /** The sequence of the last record handed to the stream (acknowledged or on its way). */
  get lastSeq(): number {
    return this.expected;
  }

  /**
   * Whether firing may go on: not while a write is being retried (NATS lost a server, or is
   * unreachable) nor once fenced. Jobs that come due meanwhile stay due and fire, late, once
   * the writes go through again.
   */
  get writable(): boolean {
    return this.fencedWhy === null && this.recovering === 0;
  }

  append(rec: LogRecord): void {
    if (this.fencedWhy !== null) throw new NotWritingError(`not writing: ${this.fencedWhy}`);
    const subject = this.o.subjects.of(rec);
    const frame = encodeRecord(rec); // throws before anything is queued when the record is too large
    this.queued.push({ subject, payload: frame.subarray(FRAME_HEADER_BYTES), removal: rec.t === 'job.removed' || rec.t === 'rule.removed' });
  }

  flush(): Promise<void> {
    if (this.fencedWhy === null && this.o.mayWrite?.() === false) this.fence('the lease ran out by this node\'s clock');
    if (this.fencedWhy !== null) return Promise.reject(new NotWritingError(`not writing: ${this.fencedWhy}`));
    const batch = this.queued;
    this.queued = [];
    if (batch.length === 0) return Promise.resolve();
    const first = this.expected;
    this.expected += batch.length;
    const before = this.tail;
    const done = this.publishBatch(batch, first, before).catch((err: unknown) => {
      this.fence(wrongLastSequence(err) ? 'another writer wrote to the stream' : `a write was not acknowledged in time: ${errorText(err)}`);
      throw err;
    });
    this.tail = done.then(() => {}, () => {});
    this.track(done);
    return done;
  }

  /** Pipelined first; on any failure, the rest again one by one once the flushes before are done. */
  private async publishBatch(batch: readonly Queued[], first: number, before: Promise<void>): Promise<void> {
    const deadline = performance.now() + PUBLISH_DEADLINE_MS;
    const tries = await Promise.allSettled(batch.map((q, k) => this.publish(q, first + k)));
    const failed = tries.findIndex((t) => t.status === 'rejected');
    if (failed === -1) return;
    this.recovering++;
    try {
      await this.republish(batch, first, before, tries, failed, deadline);
    } finally {
      this.recovering--;
    }
  }

  private async republish(
    batch: readonly Queued[], first: number, before: Promise<void>, tries: PromiseSettledResult<void>[], failed: number, deadline: number,
  ): Promise<void> {
    await before;
    if (this.fencedWhy !== null) throw new NotWritingError(`not writing: ${this.fencedWhy}`);
    for (let k = failed; k < batch.length; k++) {
      const t = tries[k]!;
      if (t.status === 'fulfilled') continue;
      for (;;) {
        try {
          await this.publish(batch[k]!, first + k);
          break;
        } catch (err) {
          // Everything before this one is acknowledged now: a wrong sequence is someone else's write.
          if (wrongLastSequence(err)) {
            this.foreignAfterSeq ??= first + k;
            throw err;
          }
          if (performance.now() > deadline) throw err;
          await new Promise((r) => setTimeout(r, RETRY_PAUSE_MS));
        }
      }
    }
  }

  private async publish(q: Queued, expected: number): Promise<void> {
    // Sealed for the sequence it lands at: every publish expects the one before it.
    const body = sealRecord(this.o.keys, this.o.subjects.stream, q.subject, expected + 1, q.payload);
    const ack = await this.o.js.publish(q.subject, body, {
      expect: { lastSequence: expected }, msgID: `${this.o.writerId}:${expected}`, timeout: ATTEMPT_TIMEOUT_MS,
    });
    if (q.removal && this.removals === null) void this.deleteRemoval(ack.seq);
    this.o.written?.(q.subject, ack.seq);
  }

  /**
   * While nothing is being written: whether the stream's last sequence, as the node's report
   * just read it, goes on past this node's last write (someone else wrote, and an idle leader
   * would not learn of it until its next write). If it
   * does, the journal is fenced as a refused write fences it, so that the node puts back what
   * a foreign message pushed out (restore.ts) without waiting for a client.
   */
  checkForeignWrites(streamLastSeq: number): void {
    // Our own writes never take the stream past `expected` (it counts them before they leave);
    // while some are on their way, a foreign message among them fails one, which fences.
    const idle = this.fencedWhy === null && this.queued.length === 0 && this.inFlight.size === 0 && this.recovering === 0;
    if (!idle || streamLastSeq <= this.expected) return;
    this.foreignAfterSeq ??= this.expected;
    this.fence('another writer wrote to the stream');
  }

  /**
   * A record of the node's own (the format mark), not the engine's: published in order after
   * everything flushed before it, as a batch of its own, so that the engine's queued records
   * stay queued for the engine's own flush (whose promise must be theirs).
   */
  writeAside(rec: LogRecord): Promise<void> {
    const engines = this.queued;
    this.queued = [];
    try {
      this.append(rec);
      return this.flush();
    } catch (err) {
      return Promise.reject(err);
    } finally {
      this.queued = engines;
    }
  }

  /** Removals a checkpoint now covers: each deleted once no node can still need it. */
  holdRemovals(seqs: readonly number[]): void {
    for (const seq of seqs) this.removals?.hold(seq);
  }

  /** Waits for the publishes in flight; nothing more is written afterwards. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
    if (this.fencedWhy === null) this.fencedWhy = 'closed';
  }

  /**
   * After close(): deletes no more removals. `drain` (a graceful stop): those no other node
   * needs are deleted first, HOLD_MS at most later. Safe after the lease is given back: a
   * removal every node has applied is needed by none, whoever leads.
   */
  async closeRemovals(drain: boolean): Promise<void> {
    if (drain) await this.removals?.drain();
    this.removals?.close();
    await Promise.allSettled([...this.inFlight]);
  }

  /** Stops writing for good (a lost lease, a failed publish); tells the primary once. */
  fence(why: string): void {
    if (this.fencedWhy !== null) return;
    this.fencedWhy = why;
    this.queued = [];
    this.removals?.pause();
    // A graceful stop's hand-over is no error.
    if (why === 'stopping') this.o.log.info({ why }, 'no longer writing to the stream');
    else this.o.log.error({ why }, 'no longer writing to the stream');
    this.o.onFenced(why);
  }

  /**
   * Deleted by its sequence, not purged by subject: nats-server 2.9 moves every consumer of
   * the stream past a purge's sequence, so a follower or a replay behind it skipped every
   * record in between. A later write to the subject has replaced it already: nothing to do.
   */
  private deleteRemoval(seq: number): Promise<void> {
    const deleted = this.o.jsm.streams.deleteMessage(this.o.subjects.stream, seq, false).then(() => {}, (err: unknown) => {
      if (alreadyGone(err)) return;
      this.o.log.warn({ err: (err as Error)?.message, seq }, 'deleting a removal from the stream failed; it stays until the identifier is written again');
    });
    this.track(deleted); // close() waits for it
    return deleted;
  }

  private track(p: Promise<unknown>): void {
    const settled = p.then(() => {}, () => {});
    this.inFlight.add(settled);
    void settled.then(() => this.inFlight.delete(settled));
  }
}
