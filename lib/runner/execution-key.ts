// The execution key (doc/execution.md "Keys to deduplicate on"): what a receiver deduplicates
// on. It names the job, its execution time and the attempt's number, so it is the same when
// the same attempt runs again (after a kill -9, a restart or a failover: the attempt's number
// is durable) and different for the next attempt, for another execution time, and for
// another job. A job SET again to the same time gets the same keys again: a receiver takes it
// for the same execution (set another time for a new one).
//
// 32 lowercase hex characters: the first 128 bits of SHA-256 over the three, each written out
// and separated by a byte no identifier holds (LF), so no two triples give the same input.
import { createHash } from 'node:crypto';
import type { Execution } from './execution.ts';

export function executionKey(jobId: string, execution: bigint, attempt: number): string {
  return createHash('sha256').update(`${jobId}\n${execution}\n${attempt}`).digest('hex').slice(0, 32);
}

/** What every runner tells the receiver of an execution (doc/execution.md "Keys to deduplicate on"). */
export interface ExecutionKeys {
  readonly key: string;
  /** exec.attemptNo, 1 when absent. */
  readonly attemptNo: number;
}

export function executionKeys(exec: Execution): ExecutionKeys {
  const attemptNo = exec.attemptNo ?? 1;
  return { key: executionKey(exec.jobId, exec.execution, attemptNo), attemptNo };
}
