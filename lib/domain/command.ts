// The normalized commands both interfaces (TCP, HTTP) produce and the engine consumes, and
// the replies it gives. This is what crosses IPC: plain data, string-tagged, no classes.
import type { Job, JobStatus } from './job.ts';
import type { Rule } from './rule.ts';
import type { StatValues } from './stat.ts';
import type { ClusterView } from './cluster-view.ts';
import type { Attempt } from './attempt.ts';
import type { ActivityView } from './activity.ts';
import type { ErrorCode } from '../errors.ts';
import type { OccurrenceView, Schedule, ScheduleView } from './schedule.ts';

export type Command =
  | { readonly op: 'job.set'; readonly id: string; readonly execution: bigint }
  /** `history`: the reply carries the job's last attempts (GET /jobs/{id}/attempts). */
  | { readonly op: 'job.get'; readonly id: string; readonly history?: boolean }
  | { readonly op: 'job.remove'; readonly id: string }
  /** Run a failed job again now (POST /jobs/{id}/retry): its time becomes now, its attempts start afresh. */
  | { readonly op: 'job.retry'; readonly id: string }
  /**
   * One page of a listing (lib/domain/page.ts): prefix '' lists all; scope further restricts to
   * a namespace ('' = no restriction); cursor 0 starts, a reply's `next` continues. `statuses`
   * (GET /jobs?status=) keeps only jobs in one of them; absent, any status (QUERY never sets it).
   */
  | {
    readonly op: 'job.list'; readonly prefix: string; readonly scope: string; readonly cursor: number; readonly limit: number;
    readonly statuses?: readonly JobStatus[];
  }
  | { readonly op: 'rule.set'; readonly rule: Rule }
  | { readonly op: 'rule.get'; readonly id: string }
  | { readonly op: 'rule.remove'; readonly id: string }
  | { readonly op: 'rule.list'; readonly prefix: string; readonly scope: string; readonly cursor: number; readonly limit: number }
  /** Schedules (tickd-protocol(7) SCHEDULES): create or replace, keeping how far it is decided. */
  | { readonly op: 'schedule.set'; readonly schedule: Schedule }
  | { readonly op: 'schedule.get'; readonly id: string }
  | { readonly op: 'schedule.remove'; readonly id: string }
  | { readonly op: 'schedule.list'; readonly prefix: string; readonly scope: string; readonly cursor: number; readonly limit: number }
  /** The next `n` nominal times after now, by the calendar alone (paused or not). */
  | { readonly op: 'schedule.next'; readonly id: string; readonly n: number }
  | { readonly op: 'schedule.pause'; readonly id: string; readonly paused: boolean }
  /** Run now: one extra occurrence, marked manual, due at once. */
  | { readonly op: 'schedule.run'; readonly id: string }
  /** The latest `limit` occurrences and skips, newest first. */
  | { readonly op: 'schedule.occurrences'; readonly id: string; readonly limit: number }
  | { readonly op: 'stat' }
  /** This node's view of its cluster (GET /cluster): answered by the node itself, never forwarded. */
  | { readonly op: 'cluster' }
  /** Per-second activity of the last minutes (GET /activity): the engine's, so the leader's in cluster mode. */
  | { readonly op: 'activity' }
  /** This node's metrics in the Prometheus text format (GET /metrics): answered by the primary itself, never forwarded. */
  | { readonly op: 'metrics' };

export type Op = Command['op'];
export type ListCommand = Extract<Command, { op: 'job.list' | 'rule.list' | 'schedule.list' }>;

/** An attempt that waits for a live node having every tag its rule requires (tickd(8) CLUSTER MODE, "Where jobs run"). */
export interface NodeWait {
  readonly on: readonly string[];
  /** Since when, epoch ns. */
  readonly sinceNs: bigint;
}

export type Reply =
  | { readonly ok: true; readonly kind: 'done' }
  /** `attempt`: the job's last attempt (GET /jobs/{id} only; TCP's GET shows none of it). */
  | {
    readonly ok: true; readonly kind: 'job'; readonly job: Job; readonly attempt?: Attempt; readonly attempts?: readonly Attempt[];
    /** Cluster mode: the job's attempt waits for a live node having these tags (GET /jobs/{id} only). */
    readonly waitingForNode?: NodeWait;
  }
  /** `next`: the cursor of the following page, null when the listing is complete. */
  | { readonly ok: true; readonly kind: 'jobs'; readonly jobs: Job[]; readonly next: number | null }
  | { readonly ok: true; readonly kind: 'rule'; readonly rule: Rule }
  | { readonly ok: true; readonly kind: 'rules'; readonly rules: Rule[]; readonly next: number | null }
  /** `job`: the job a run now made. */
  | { readonly ok: true; readonly kind: 'schedule'; readonly schedule: ScheduleView; readonly job?: string }
  | { readonly ok: true; readonly kind: 'schedules'; readonly schedules: ScheduleView[]; readonly next: number | null }
  | { readonly ok: true; readonly kind: 'instants'; readonly instants: bigint[] }
  | { readonly ok: true; readonly kind: 'occurrences'; readonly occurrences: OccurrenceView[] }
  | { readonly ok: true; readonly kind: 'stat'; readonly stat: StatValues }
  | { readonly ok: true; readonly kind: 'cluster'; readonly cluster: ClusterView }
  | { readonly ok: true; readonly kind: 'activity'; readonly activity: ActivityView }
  | { readonly ok: true; readonly kind: 'metrics'; readonly text: string }
  | { readonly ok: false; readonly code: ErrorCode; readonly message: string };
