// The primary's in-memory job store: jobs by identifier, a due-time heap of armed jobs, and
// per-status counts kept incrementally so that STAT is O(1) (tickd-protocol(7) STATISTICS).
//
// Layout: each job lives in a slot (a small integer). Its identifier is ids[slot], its status
// code statuses[slot] (the persisted status byte: index into JOB_STATUSES) and its execution
// time the heap's key for that slot (DueHeap keeps keys of disarmed slots too). Slots of
// deleted jobs are reused. About 100 bytes per job in all (see bench/store.ts); callers only
// ever see fresh plain Job objects.
//
// Invariants:
// - slotOf.get(id) === s  <=>  ids[s] === id; free slots hold undefined and are in `free`.
// - perStatus[c] is the number of stored jobs whose status code is c, armed or not.
// - a job is armed (in the heap) only if it is `planned`. Every `planned` job is armed except
//   those handed out by takeDue() whose new status the caller has not set yet: they stay
//   `planned` (and counted as planned) until setStatus()/put()/delete() decides their fate;
//   put() or setStatus(id, 'planned') arms such a job again.
// - capacity: a V8 Map holds at most 2^24 (16 777 216) entries; beyond that put() throws a
//   RangeError, as it does for an execution outside i64. The caller reports it as internal.
import { JOB_STATUSES, statusCode } from '../domain/job.ts';
import type { Job, JobStatus } from '../domain/job.ts';
import { DueHeap } from './heap.ts';
import { narrowest } from './prefix.ts';
import { scanSlots, type Page } from '../domain/page.ts';

const PLANNED = 0;
const INITIAL_SLOTS = 1024;

export interface JobCounts {
  readonly total: number;
  readonly planned: number;
  readonly triggered: number;
  readonly executed: number;
  readonly failed: number;
}

export class JobStore {
  private readonly slotOf = new Map<string, number>();
  private readonly ids: Array<string | undefined> = [];
  private statuses = new Uint8Array(INITIAL_SLOTS);
  private readonly free: number[] = [];
  private readonly due = new DueHeap(INITIAL_SLOTS);
  private readonly perStatus = [0, 0, 0, 0];

  get size(): number {
    return this.slotOf.size;
  }

  get(id: string): Job | undefined {
    const slot = this.slotOf.get(id);
    return slot === undefined ? undefined : this.jobAt(slot);
  }

  /**
   * Creates or replaces the whole job (any status) and returns the previous value. A planned
   * job is (re-)armed with a fresh sequence, so it fires after jobs already due at that instant.
   * Serves SET, logfile replay and undo (put(previous)). Throws RangeError, changing nothing,
   * for an execution outside i64 or an unknown status (both excluded by the types).
   */
  put(job: Job): Job | undefined {
    const code = statusCode(job.status);
    const existing = this.slotOf.get(job.id);
    if (existing === undefined) {
      const slot = this.free.length > 0 ? this.free[this.free.length - 1]! : this.ids.length;
      this.due.setKey(slot, job.execution); // validates before anything is committed
      this.slotOf.set(job.id, slot); // may throw at the Map's capacity: nothing committed yet
      if (slot === this.ids.length) this.ids.push(job.id);
      else {
        this.free.pop();
        this.ids[slot] = job.id;
      }
      this.setCode(slot, code, -1);
      if (code === PLANNED) this.due.insert(slot);
      return undefined;
    }
    const previous = this.jobAt(existing);
    this.due.setKey(existing, job.execution); // validates first; re-arms when armed
    if (code !== PLANNED) this.due.remove(existing);
    else if (!this.due.has(existing)) this.due.insert(existing);
    this.setCode(existing, code, this.statuses[existing]!);
    return previous;
  }

  /**
   * Changes the status of an existing job and returns its previous value (undefined, and no
   * change, when the job does not exist). Setting `planned` arms the job at its current
   * execution if it is not armed yet; any other status disarms it.
   */
  setStatus(id: string, status: JobStatus): Job | undefined {
    const slot = this.slotOf.get(id);
    if (slot === undefined) return undefined;
    const code = statusCode(status);
    const previous = this.jobAt(slot);
    this.setCode(slot, code, this.statuses[slot]!);
    if (code !== PLANNED) this.due.remove(slot);
    else if (!this.due.has(slot)) this.due.insert(slot);
    return previous;
  }

  /** Deletes the job and returns its previous value, or undefined when it did not exist. */
  delete(id: string): Job | undefined {
    const slot = this.slotOf.get(id);
    if (slot === undefined) return undefined;
    const previous = this.jobAt(slot);
    this.slotOf.delete(id);
    this.due.remove(slot);
    this.perStatus[this.statuses[slot]!]!--;
    this.ids[slot] = undefined;
    this.free.push(slot);
    return previous;
  }

  /** Deletes every job (a cluster node rebuilding its copy of the log). */
  clear(): void {
    for (const id of [...this.slotOf.keys()]) this.delete(id);
  }

  /** Execution time of the earliest armed job, or undefined when none is armed. O(1). */
  nextDue(): bigint | undefined {
    return this.due.peekKey();
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
   * (lib/domain/page.ts). One startsWith per slot examined; the slots `keep` refuses count
   * toward the page's bound like any other, so a rare status still costs a bounded slice.
   */
  page(prefix: string, scope: string, cursor: number, limit: number, keep?: (status: JobStatus) => boolean): Page<Job> {
    const start = narrowest(prefix, scope);
    if (start === null) return { items: [], next: null };
    const ids = this.ids;
    return scanSlots(ids.length, cursor, limit, (slot) => {
      const id = ids[slot];
      if (id === undefined || !id.startsWith(start)) return undefined;
      return keep === undefined || keep(JOB_STATUSES[this.statuses[slot]!]!) ? this.jobAt(slot) : undefined;
    });
  }

  /** The jobs in one status, without building objects for the others (startup re-dispatch). */
  withStatus(status: JobStatus): Job[] {
    const code = statusCode(status);
    const out: Job[] = [];
    if (this.perStatus[code] === 0) return out;
    const ids = this.ids;
    for (let slot = 0; slot < ids.length; slot++) {
      if (ids[slot] !== undefined && this.statuses[slot] === code) out.push(this.jobAt(slot));
    }
    return out;
  }

  counts(): JobCounts {
    const c = this.perStatus;
    return { total: this.slotOf.size, planned: c[0]!, triggered: c[1]!, executed: c[2]!, failed: c[3]! };
  }

  private jobAt(slot: number): Job {
    return { id: this.ids[slot]!, execution: this.due.keyOf(slot), status: JOB_STATUSES[this.statuses[slot]!]! };
  }

  /** Sets the status code of a slot, moving one unit of count from `from` (-1: a new job). */
  private setCode(slot: number, code: number, from: number): void {
    if (slot >= this.statuses.length) {
      const grown = new Uint8Array(Math.max(this.statuses.length * 2, slot + 1));
      grown.set(this.statuses);
      this.statuses = grown;
    }
    if (from >= 0) this.perStatus[from]!--;
    this.perStatus[code]!++;
    this.statuses[slot] = code;
  }
}
