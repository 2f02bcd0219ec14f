// The last attempts of each job, in the primary's memory (doc/execution.md "The attempt
// record"): what GET /jobs/{id} shows as `last_attempt`, and GET /jobs/{id}/attempts as the
// job's history, its last `keep` attempts (tickd.toml(5) [database] attempt_history).
//
// Invariants:
// - Bounded: at most `capacity` records (MAX_ATTEMPT_RECORDS by default); recording one more
//   evicts the record written longest ago. Each record's text is bounded by the outcome's own
//   limit (MAX_OUTCOME_TEXT_BYTES, lib/domain/attempt.ts), so the whole store is too.
// - A job has at most `keep` records: recording again adds the newest (dropping its oldest past
//   `keep`) and makes the job the newest. `capacity` bounds the records of all jobs together:
//   past it, the jobs recorded longest ago go, with all of theirs.
// - record, get, delete and the eviction are O(1), each of them, not only on average: records
//   sit in slots linked oldest to newest (two Int32Arrays of links), and the job store's index
//   (id-index.ts: no tombstones, growth carried out a little per insert) finds a job's slot.
//   Not a Map: full, every record evicts one job and adds another, and V8 keeps a deleted Map
//   entry as a hole until the table is rebuilt, all of it in one call: a record every ~160 000
//   took 15-23 ms with 100 000 held (the primary's longest turns in bench row schedules-spread).
//   The oldest is the list's head, never found by iterating: evicting "the first key" of a Map
//   walked every hole, up to ~90 us per record once 100 000 were held.
// - Slots grow by doubling up to the capacity, so a primary that records little holds little;
//   in place, copying nothing (growable.ts, chunked.ts): a record() that grew them is not a
//   long turn of the primary.
// - Memory only. The engine writes it (a result of the job's current attempt, or a due job no
//   rule matched), REMOVE deletes the job's record, a step-down clears it (cluster mode: only
//   the leader's attempts are told).
import type { Attempt } from '../domain/attempt.ts';
import { Chunked } from './chunked.ts';
import { growable, grown } from './growable.ts';
import { hashId, IdIndex } from './id-index.ts';

/** Records kept at most: the most recently recorded ones. */
export const MAX_ATTEMPT_RECORDS = 100_000;

export interface ReadonlyAttempts {
  get(jobId: string): Attempt | undefined;
  /** The job's last attempts, oldest first (empty when none is kept). */
  history(jobId: string): readonly Attempt[];
  readonly size: number;
}

/** Attempts kept per job unless configured. */
export const DEFAULT_ATTEMPT_HISTORY = 10;

const NONE = -1;
const FIRST_SLOTS = 1024;

export class LastAttempts implements ReadonlyAttempts {
  readonly capacity: number;
  readonly keep: number;
  /** Records held, over every job (the current ones and the earlier ones). */
  private records = 0;
  /** Each slot's earlier attempts, oldest first (absent until a job has a second). */
  private readonly earlier = new Chunked<Attempt[] | undefined>(undefined);
  private readonly ids = new Chunked<string>('');
  /** Finds a job's slot. */
  private readonly slotOf = new IdIndex({ matches: (slot, id) => this.ids.get(slot) === id });
  private readonly attempts = new Chunked<Attempt | undefined>(undefined);
  private older: Int32Array;
  private newer: Int32Array;
  private oldest = NONE;
  private newest = NONE;
  /** Freed slots (a job's record deleted), reused before the slots grow. */
  private free: number[] = [];

  constructor(capacity = MAX_ATTEMPT_RECORDS, keep = DEFAULT_ATTEMPT_HISTORY) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) throw new RangeError(`capacity must be a positive integer, got ${capacity}`);
    if (!Number.isSafeInteger(keep) || keep < 1) throw new RangeError(`keep must be a positive integer, got ${keep}`);
    this.capacity = capacity;
    this.keep = keep;
    this.older = growable(Int32Array, 0, capacity);
    this.newer = growable(Int32Array, 0, capacity);
  }

  get size(): number {
    return this.slotOf.size;
  }

  get(jobId: string): Attempt | undefined {
    const slot = this.slotOf.find(jobId, hashId(jobId));
    return slot < 0 ? undefined : this.attempts.get(slot);
  }

  history(jobId: string): readonly Attempt[] {
    const slot = this.slotOf.find(jobId, hashId(jobId));
    if (slot < 0) return [];
    const before = this.earlier.get(slot);
    return before === undefined ? [this.attempts.get(slot)!] : [...before, this.attempts.get(slot)!];
  }

  record(jobId: string, attempt: Attempt): void {
    const hash = hashId(jobId);
    let slot = this.slotOf.find(jobId, hash);
    if (slot >= 0) {
      this.unlink(slot); // it moves to the newest end
      if (this.keep > 1) {
        let before = this.earlier.get(slot);
        if (before === undefined) this.earlier.set(slot, (before = []));
        before.push(this.attempts.get(slot)!);
        if (before.length >= this.keep) before.shift();
        else this.records++;
      }
    } else {
      slot = this.slotForNew();
      this.ids.set(slot, jobId);
      this.slotOf.insert(hash, slot);
      this.records++;
    }
    this.attempts.set(slot, attempt);
    this.append(slot);
    while (this.records > this.capacity && this.oldest !== slot) this.evict(this.oldest);
  }

  private evict(slot: number): void {
    this.unindex(slot);
    this.unlink(slot);
    this.drop(slot);
    this.ids.set(slot, '');
    this.free.push(slot);
  }

  /** Forgets a slot's records (the count with them). */
  private drop(slot: number): void {
    this.records -= 1 + (this.earlier.get(slot)?.length ?? 0);
    this.attempts.set(slot, undefined);
    this.earlier.set(slot, undefined);
  }

  delete(jobId: string): void {
    const slot = this.slotOf.delete(jobId, hashId(jobId));
    if (slot < 0) return;
    this.unlink(slot);
    this.ids.set(slot, '');
    this.drop(slot);
    this.free.push(slot);
  }

  clear(): void {
    this.slotOf.clear();
    this.ids.clear();
    this.attempts.clear();
    this.earlier.clear();
    this.records = 0;
    this.older = growable(Int32Array, 0, this.capacity);
    this.newer = growable(Int32Array, 0, this.capacity);
    this.oldest = NONE;
    this.newest = NONE;
    this.free = [];
  }

  /** Every record, oldest first: a copy, so the store may change while it is read. */
  entries(): IterableIterator<[string, Attempt]> {
    const all: Array<[string, Attempt]> = [];
    for (let slot = this.oldest; slot !== NONE; slot = this.newer[slot]!) all.push([this.ids.get(slot), this.attempts.get(slot)!]);
    return all.values();
  }

  /** A slot for a job not recorded yet: a freed one, a new one, or the oldest record's. */
  private slotForNew(): number {
    const freed = this.free.pop();
    if (freed !== undefined) return freed;
    if (this.slotOf.size >= this.capacity) {
      const slot = this.oldest;
      this.unindex(slot);
      this.unlink(slot);
      this.drop(slot);
      return slot;
    }
    const slot = this.ids.length;
    if (slot === this.older.length) this.grow();
    this.ids.push('');
    this.attempts.push(undefined);
    this.earlier.push(undefined);
    return slot;
  }

  private unindex(slot: number): void {
    const id = this.ids.get(slot);
    this.slotOf.delete(id, hashId(id));
  }

  private grow(): void {
    const size = Math.min(this.capacity, Math.max(FIRST_SLOTS, this.older.length * 2));
    this.older = grown(this.older, size);
    this.newer = grown(this.newer, size);
  }

  private append(slot: number): void {
    this.older[slot] = this.newest;
    this.newer[slot] = NONE;
    if (this.newest === NONE) this.oldest = slot;
    else this.newer[this.newest] = slot;
    this.newest = slot;
  }

  private unlink(slot: number): void {
    const o = this.older[slot]!;
    const n = this.newer[slot]!;
    if (o === NONE) this.oldest = n;
    else this.newer[o] = n;
    if (n === NONE) this.newest = o;
    else this.older[n] = o;
  }
}
