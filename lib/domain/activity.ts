// What GET /activity answers (tickd-protocol(7) HTTP INTERFACE): per-second counts of the last
// few minutes, for the console's chart. Plain data; it crosses IPC inside an 'activity' reply.
// The ring that fills it is lib/engine/activity.ts.

export interface ActivityBucket {
  /** Start of the second, epoch milliseconds. */
  readonly atMs: number;
  /** Due jobs the scheduler took in this second (a runner started for them, or no rule matched). */
  readonly fired: number;
  /** Executions that finished successfully in this second. */
  readonly executed: number;
  /** Executions that failed in this second, and due jobs no rule matched. */
  readonly failed: number;
  /** Median lateness (ms) of the runner starts in this second; null when there was none. */
  readonly latenessP50Ms: number | null;
  /** Greatest lateness (ms) of the runner starts in this second; null when there was none. */
  readonly latenessMaxMs: number | null;
}

export interface ActivityView {
  /** The width of a bucket: 1000. */
  readonly intervalMs: number;
  /** Oldest first; the last one is the current second, still filling. */
  readonly buckets: readonly ActivityBucket[];
}
