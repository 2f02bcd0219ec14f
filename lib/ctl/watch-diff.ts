// What `tickd ctl watch` computes between two polls (tickd-ctl(1) WATCH). Pure.
//
// Theory: the daemon pushes nothing, so watch polls: each poll lists the prefix (QUERY) and
// reads STAT, and compares with the previous poll.
// - A job whose status differs from the last poll's is an event `from -> to`; a job not seen
//   before is `(new) -> status`, one gone is `status -> (removed)`. Statuses a job passed
//   through between two polls are not seen (planned -> executed without the triggered). A job
//   set again and run again between two polls shows as `executed -> executed` with its new time.
// - Lateness: when an event is the first sign that a job fired (from planned or new, to
//   triggered, executed or failed), the time its QUERY line arrived minus its execution time.
//   The firing happened before the daemon wrote that line, so this is an upper bound; it
//   overshoots by less than the time since the previous poll began. It is read on this
//   machine's clock, so a clock that disagrees with the daemon's shifts it.
// - Rates: STAT has counts, not counters; a rate is the change of a count between two polls
//   per second (net: a job removed lowers its status' count).
import type { Job, JobStatus } from '../domain/job.ts';

export interface SeenJob {
  readonly job: Job;
  /** Epoch nanoseconds on this machine when its line arrived. */
  readonly seenNs: bigint;
}

export interface JobEvent {
  readonly id: string;
  /** null: not seen before. */
  readonly from: JobStatus | null;
  /** null: removed. */
  readonly to: JobStatus | null;
  readonly execution: bigint;
  readonly seenNs: bigint;
  /** Upper bound of the firing's lateness, on the event that first shows it; else null. */
  readonly latenessMaxNs: bigint | null;
}

export class JobTracker {
  private known: Map<string, Job> | null = null;

  /** How many jobs the last poll saw. */
  get size(): number {
    return this.known?.size ?? 0;
  }

  /** One poll's listing; the events since the previous poll (none for the first, the baseline). */
  update(seen: readonly SeenJob[], polledNs: bigint): JobEvent[] {
    const previous = this.known;
    const now = new Map<string, Job>();
    const events: JobEvent[] = [];
    for (const { job, seenNs } of seen) {
      now.set(job.id, job);
      if (previous === null) continue;
      const before = previous.get(job.id);
      // Set again and run again between two polls: same status, another time.
      const rerun = before !== undefined && before.execution !== job.execution && job.status !== 'planned';
      if (before !== undefined && before.status === job.status && !rerun) continue;
      const fired = job.status !== 'planned' && (before === undefined || before.status === 'planned' || rerun);
      events.push({
        id: job.id, from: before?.status ?? null, to: job.status, execution: job.execution, seenNs,
        latenessMaxNs: fired ? seenNs - job.execution : null,
      });
    }
    if (previous !== null) {
      for (const [id, job] of previous) {
        if (!now.has(id)) events.push({ id, from: job.status, to: null, execution: job.execution, seenNs: polledNs, latenessMaxNs: null });
      }
    }
    this.known = now;
    return events;
  }
}

export const RATE_KEYS = ['jobs_total', 'jobs_executed', 'jobs_failed'] as const;

export type Rates = Readonly<Record<(typeof RATE_KEYS)[number], number>>;

export class StatRates {
  private last: { readonly at: bigint; readonly values: ReadonlyMap<string, string> } | null = null;

  /** The change per second of RATE_KEYS since the previous STAT; null for the first. */
  update(pairs: ReadonlyArray<readonly [string, string]>, atNs: bigint): Rates | null {
    const values = new Map(pairs);
    const last = this.last;
    this.last = { at: atNs, values };
    if (last === null || atNs <= last.at) return null;
    const seconds = Number(atNs - last.at) / 1e9;
    const rate = (k: string): number => (Number(values.get(k) ?? 0) - Number(last.values.get(k) ?? 0)) / seconds;
    return { jobs_total: rate('jobs_total'), jobs_executed: rate('jobs_executed'), jobs_failed: rate('jobs_failed') };
  }
}
