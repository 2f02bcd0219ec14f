// The last attempt of each job, in the primary's memory (doc/execution.md "The attempt
// record"): what GET /jobs/{id} shows as `last_attempt`.
//
// Invariants:
// - Bounded: at most `capacity` records (MAX_ATTEMPT_RECORDS by default); recording one more
//   evicts the record written longest ago. Each record's text is bounded by the outcome's own
//   limit (MAX_OUTCOME_TEXT_BYTES, lib/domain/attempt.ts), so the whole store is too.
// - A job has at most one record: recording again replaces it and makes it the newest.
// - record, get, delete and the eviction are O(1): a Map keeps insertion order, so its first
//   key is always the oldest record.
// - Memory only. The engine writes it (a result of the job's current attempt, or a due job no
//   rule matched), REMOVE deletes the job's record, a step-down clears it (cluster mode: only
//   the leader's attempts are told).
import type { Attempt } from '../domain/attempt.ts';

/** Records kept at most: the most recently recorded ones. */
export const MAX_ATTEMPT_RECORDS = 100_000;

export interface ReadonlyAttempts {
  get(jobId: string): Attempt | undefined;
  readonly size: number;
}

export class LastAttempts implements ReadonlyAttempts {
  readonly capacity: number;
  private readonly records = new Map<string, Attempt>();

  constructor(capacity = MAX_ATTEMPT_RECORDS) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) throw new RangeError(`capacity must be a positive integer, got ${capacity}`);
    this.capacity = capacity;
  }

  get size(): number {
    return this.records.size;
  }

  get(jobId: string): Attempt | undefined {
    return this.records.get(jobId);
  }

  record(jobId: string, attempt: Attempt): void {
    // Delete first so that a replaced record moves to the newest end.
    if (!this.records.delete(jobId) && this.records.size >= this.capacity) {
      const oldest = this.records.keys().next();
      if (oldest.done !== true) this.records.delete(oldest.value);
    }
    this.records.set(jobId, attempt);
  }

  delete(jobId: string): void {
    this.records.delete(jobId);
  }

  clear(): void {
    this.records.clear();
  }

  /** Every record, oldest first. */
  entries(): IterableIterator<[string, Attempt]> {
    return this.records.entries();
  }
}
