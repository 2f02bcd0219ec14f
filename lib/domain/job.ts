// A job: an identifier, an execution time in i64 nanoseconds since the epoch, a status.
// Timestamps are bigint end to end; never a float.

export const JOB_STATUSES = ['planned', 'triggered', 'executed', 'failed'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export interface Job {
  readonly id: string;
  readonly execution: bigint;
  readonly status: JobStatus;
}

/** Persisted status byte (interface.md, Persisted encoding): index into JOB_STATUSES. */
export function statusCode(status: JobStatus): number {
  return JOB_STATUSES.indexOf(status);
}

export function isTerminal(status: JobStatus): boolean {
  return status === 'executed' || status === 'failed';
}
