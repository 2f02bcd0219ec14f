// A job: an identifier, an execution time in i64 nanoseconds since the epoch, a status.
// Timestamps are bigint end to end; never a float.

export const JOB_STATUSES = ['planned', 'triggered', 'executed', 'failed'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export interface Job {
  readonly id: string;
  readonly execution: bigint;
  readonly status: JobStatus;
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
