// A job: an identifier, an execution time in i64 nanoseconds since the epoch, a status.
// Timestamps are bigint end to end; never a float.

export const JOB_STATUSES = ['planned', 'triggered', 'executed', 'failed'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export interface Job {
  readonly id: string;
  readonly execution: bigint;
  readonly status: JobStatus;
  /**
   * Retries (issue 38): the number of the attempt that runs or ran last, present only once a
   * rule's retry policy made a second attempt, so a job that never retries carries nothing and
   * keeps ztick's record (type 0). Absent: 1 once it fired, 0 while it is planned.
   */
  readonly attempt?: number | undefined;
  /** While the job waits for its next attempt (status `triggered`): when that attempt is due, epoch ns. */
  readonly retryAt?: bigint | undefined;
}

/** The number of the attempt that runs or ran last (HTTP `attempt`). */
export function attemptNumber(job: Job): number {
  return job.attempt ?? (job.status === 'planned' ? 0 : 1);
}

export function isJobStatus(value: string): value is JobStatus {
  return (JOB_STATUSES as readonly string[]).includes(value);
}

/** Persisted status byte (doc/logfile-format.md): the index into JOB_STATUSES. */
export function statusCode(status: JobStatus): number {
  switch (status) {
    case 'planned': return 0;
    case 'triggered': return 1;
    case 'executed': return 2;
    case 'failed': return 3;
    default: {
      // Types rule this out; a bad value from an untyped path must not be stored as a status.
      const unknown: never = status;
      throw new RangeError(`unknown job status ${String(unknown)}`);
    }
  }
}
