// The primary's in-memory job store: jobs by identifier, a due-time heap of armed jobs, and
// per-status counts kept incrementally so that STAT is O(1) (tickd-protocol(7) STATISTICS).
//
// Layout: each job lives in a slot (a small integer). Its identifier is the slot's entry in
// `ids` (id-table.ts: UTF-8 bytes in an off-heap arena, found through an open-addressing
// index), its status code statuses[slot] (the persisted status byte: index into
// JOB_STATUSES; FREE for a slot no job holds) and its execution time the heap's key for that
// slot (DueHeap keeps keys of disarmed slots too). Slots of deleted jobs are reused.
// Why no JS object per job: with a million jobs, a Map<string, number> and its million
// identifier strings were most of what a major GC had to trace (a full GC with a million
// jobs stored: 24-43 ms, now 2-6 ms, in bench/store.ts) and what its scavenges promoted, and
// most of the primary's RSS (203-255 MB per million jobs in the `rss` bench row, now 100-112,
// against a target of 150). In typed arrays and byte chunks a job costs 24 bytes of heap keys, 1 of status, 4 of slot -> block, 16 of index and its
// identifier's block (6 bytes + the UTF-8, rounded to its size class): 64 bytes per job in
// bench/store.ts, none of it on the JS heap. Callers only ever see fresh plain Job objects;
// get/put/setStatus/delete answer with the caller's own identifier string, and only takeDue,
// page and withStatus build strings from the arena.
//
// Invariants:
// - ids.find(id) === s  <=>  the identifier stored in slot s is id  <=>  statuses[s] !== FREE
//   (for s < ids.length).
// - perStatus[c] is the number of stored jobs whose status code is c, armed or not.
// - a job is armed (in the heap) only if it is `planned`. Every `planned` job is armed except
//   those handed out by takeDue() whose new status the caller has not set yet: they stay
//   `planned` (and counted as planned) until setStatus()/put()/delete() decides their fate;
//   put() or setStatus(id, 'planned') arms such a job again.
// - retry state (Job.attempt, Job.retryAt: issue 38) lives in `retries`, by slot, only for the
//   jobs a retry policy touched: a store whose rules never retry holds an empty Map. put()
//   replaces it with the job's own (none: deleted), setStatus() keeps the attempt number and
//   drops retryAt (the wait is over whatever the new status), delete() drops it.
// - capacity: at most MAX_SLOTS (2^24, 16 777 216) jobs, identifiers of at most MAX_ID_BYTES
//   UTF-8 bytes; beyond that put() throws a RangeError changing nothing, as it does for an
//   execution outside i64. The caller reports it as internal.
import { JOB_STATUSES, statusCode } from '../domain/job.ts';
import type { Job, JobStatus } from '../domain/job.ts';
import { growable, grown } from './growable.ts';
import { DueHeap } from './heap.ts';
import { hashId, IdTable, MAX_SLOTS } from './id-table.ts';
import { narrowest } from './prefix.ts';
import { scanSlots, type Page } from '../domain/page.ts';

const PLANNED = 0;
/** Status byte of a slot no job holds. */
const FREE = 0xff;
const INITIAL_SLOTS = 1024;

export interface JobCounts {
  readonly total: number;
  readonly planned: number;
  readonly triggered: number;
  readonly executed: number;
  readonly failed: number;
}

interface RetryState {
  readonly attempt: number;
  readonly retryAt: bigint | undefined;
}

export class JobStore {
  private readonly ids = new IdTable(INITIAL_SLOTS);
  private readonly retries = new Map<number, RetryState>();
  private statuses = growable(Uint8Array, INITIAL_SLOTS, MAX_SLOTS).fill(FREE);
  private readonly due = new DueHeap(INITIAL_SLOTS);
  private readonly perStatus = [0, 0, 0, 0];

  /** Bytes of its growable columns (growable.ts), which process.memoryUsage().arrayBuffers leaves out. */
  get columnBytes(): number {
    return this.due.bytes + this.statuses.byteLength + this.ids.columnBytes;
  }

  get size(): number {
    return this.ids.size;
  }

  get(id: string): Job | undefined {
    const slot = this.ids.find(id, hashId(id));
    return slot < 0 ? undefined : this.jobOf(id, slot);
  }

  /** The job's status alone, no Job made (what deciding a schedule asks of its occurrences, many a decision). */
  statusOf(id: string): JobStatus | undefined {
    const slot = this.ids.find(id, hashId(id));
    return slot < 0 ? undefined : JOB_STATUSES[this.statuses[slot]!];
  }

  /**
   * Creates or replaces the whole job (any status) and returns the previous value. A planned
   * job is (re-)armed with a fresh sequence, so it fires after jobs already due at that instant.
   * Serves SET, logfile replay and undo (put(previous)). Throws RangeError, changing nothing,
   * for an execution outside i64, an unknown status (both excluded by the types) or an
   * identifier the store cannot hold (see the header).
   */
  put(job: Job): Job | undefined {
    const code = statusCode(job.status);
    const hash = hashId(job.id);
    const existing = this.ids.find(job.id, hash);
    if (existing < 0) {
      const slot = this.ids.nextSlot();
      this.due.setKey(slot, job.execution); // validates; the key of an unused slot is never read
      this.ensureStatuses(slot);
      this.ids.add(job.id, hash); // takes `slot`; may throw at capacity: nothing committed yet
      this.setCode(slot, code, -1);
      this.setRetry(slot, job);
      if (code === PLANNED) this.due.insert(slot);
      return undefined;
    }
    const previous = this.jobOf(job.id, existing);
    this.due.setKey(existing, job.execution); // validates first; re-arms when armed
    if (code !== PLANNED) this.due.remove(existing);
    else if (!this.due.has(existing)) this.due.insert(existing);
    this.setCode(existing, code, this.statuses[existing]!);
    this.setRetry(existing, job);
    return previous;
  }

  /**
   * Changes the status of an existing job and returns its previous value (undefined, and no
   * change, when the job does not exist). Setting `planned` arms the job at its current
   * execution if it is not armed yet; any other status disarms it.
   */
  setStatus(id: string, status: JobStatus): Job | undefined {
    const slot = this.ids.find(id, hashId(id));
    if (slot < 0) return undefined;
    const code = statusCode(status);
    const previous = this.jobOf(id, slot);
    this.setCode(slot, code, this.statuses[slot]!);
    if (code !== PLANNED) this.due.remove(slot);
    else if (!this.due.has(slot)) this.due.insert(slot);
    const retry = this.retries.get(slot);
    if (retry?.retryAt !== undefined) this.retries.set(slot, { attempt: retry.attempt, retryAt: undefined });
    return previous;
  }

  /** Deletes the job and returns its previous value, or undefined when it did not exist. */
  delete(id: string): Job | undefined {
    const slot = this.ids.remove(id, hashId(id));
    if (slot < 0) return undefined;
    const previous = this.jobOf(id, slot); // its time and status are still there
    this.due.remove(slot);
    this.retries.delete(slot);
    this.perStatus[this.statuses[slot]!]!--;
    this.statuses[slot] = FREE;
    return previous;
  }

  /** Deletes every job (a cluster node rebuilding its copy of the log). */
  clear(): void {
    this.ids.clear();
    this.due.clear();
    this.retries.clear();
    this.statuses = growable(Uint8Array, INITIAL_SLOTS, MAX_SLOTS).fill(FREE);
    this.perStatus.fill(0);
  }

  /** Execution time of the earliest armed job, or undefined when none is armed. O(1). */
  nextDue(): bigint | undefined {
    return this.due.peekKey();
  }

  /** The earliest armed job (the next takeDue's first), or undefined when none is armed. */
  nextDueJob(): Job | undefined {
    return this.due.size === 0 ? undefined : this.jobAt(this.due.peek());
  }

  /**
   * Disarms and returns, earliest first (FIFO among equal times), up to `limit` armed jobs due
   * at `nowNs` (execution <= nowNs). Their status stays `planned` and they stay stored: the
   * caller then sets the status it decides (see the header for the in-between state).
   */
  takeDue(nowNs: bigint, limit: number): Job[] {
    return this.due.popDue(nowNs, limit).map((slot) => this.jobAt(slot));
  }

  /**
   * One page of the jobs whose identifier starts with `prefix` and, unless `scope` is '', with
   * `scope`, and whose status `keep` accepts (any when absent), in slot order from `cursor`
   * (lib/domain/page.ts). One byte-wise prefix test per slot examined, no string built for the
   * slots it refuses; the slots `keep` refuses count toward the page's bound like any other,
   * so a rare status still costs a bounded slice.
   */
  page(prefix: string, scope: string, cursor: number, limit: number, keep?: (status: JobStatus) => boolean): Page<Job> {
    const start = narrowest(prefix, scope);
    if (start === null) return { items: [], next: null };
    const bytes = Buffer.from(start, 'utf8');
    const ids = this.ids;
    return scanSlots(ids.length, cursor, limit, (slot) => {
      const code = this.statuses[slot]!;
      if (code === FREE || !ids.startsWith(slot, bytes)) return undefined;
      return keep === undefined || keep(JOB_STATUSES[code]!) ? this.jobAt(slot) : undefined;
    });
  }

  /** The jobs in one status, without building objects for the others (startup re-dispatch). */
  withStatus(status: JobStatus): Job[] {
    const code = statusCode(status);
    const out: Job[] = [];
    if (this.perStatus[code] === 0) return out;
    const n = this.ids.length;
    for (let slot = 0; slot < n; slot++) {
      if (this.statuses[slot] === code) out.push(this.jobAt(slot));
    }
    return out;
  }

  counts(): JobCounts {
    const c = this.perStatus;
    return { total: this.ids.size, planned: c[0]!, triggered: c[1]!, executed: c[2]!, failed: c[3]! };
  }

  /** The job in a slot in use, its identifier read back from the arena. */
  private jobAt(slot: number): Job {
    return this.jobOf(this.ids.idAt(slot), slot);
  }

  /** The job in a slot in use whose identifier the caller already has. */
  private jobOf(id: string, slot: number): Job {
    const job = { id, execution: this.due.keyOf(slot), status: JOB_STATUSES[this.statuses[slot]!]! };
    if (this.retries.size === 0) return job;
    const retry = this.retries.get(slot);
    if (retry === undefined) return job;
    return retry.retryAt === undefined ? { ...job, attempt: retry.attempt } : { ...job, attempt: retry.attempt, retryAt: retry.retryAt };
  }

  /** The jobs waiting for their next attempt (status `triggered`, retryAt set): armed again at a start or a take-over. */
  waitingForRetry(): Job[] {
    const out: Job[] = [];
    for (const [slot, r] of this.retries) if (r.retryAt !== undefined) out.push(this.jobAt(slot));
    return out;
  }

  private setRetry(slot: number, job: Job): void {
    if (job.attempt === undefined) {
      if (this.retries.size > 0) this.retries.delete(slot);
    } else {
      this.retries.set(slot, { attempt: job.attempt, retryAt: job.retryAt });
    }
  }

  private ensureStatuses(slot: number): void {
    const had = this.statuses.length;
    if (slot < had) return;
    // In place (growable.ts); the byte a slot costs is filled, a megabyte a million slots.
    this.statuses = grown(this.statuses, Math.min(MAX_SLOTS, Math.max(had * 2, slot + 1)));
    this.statuses.fill(FREE, had);
  }

  /** Sets the status code of a slot, moving one unit of count from `from` (-1: a new job). */
  private setCode(slot: number, code: number, from: number): void {
    if (from >= 0) this.perStatus[from]!--;
    this.perStatus[code]!++;
    this.statuses[slot] = code;
  }
}
