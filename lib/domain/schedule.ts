// A schedule and what the daemon keeps of it (tickd-protocol(7) SCHEDULES): the shapes the
// interfaces, the engine, the log and the client share. The fields' rules and defaults are
// lib/schedule/spec.ts's; when occurrences fall, lib/schedule/calendar.ts's.

export type MissedPolicy = 'skip' | 'once' | 'all';
export type OverlapPolicy = 'allow' | 'skip' | 'queue';
export type SkipReason = 'missed' | 'overlap';

/** What of a schedule says when its occurrences fall. */
export interface Timing {
  /** Exactly one of `cron` and `every` is set. */
  readonly cron: string | null;
  /** Nanoseconds between occurrences, aligned to `start` when given, else to the Unix epoch. */
  readonly every: bigint | null;
  /** An IANA time zone name: cron fields are read in it. */
  readonly tz: string;
  /** No occurrence before it (inclusive), nanoseconds. */
  readonly start: bigint | null;
  /** No occurrence at or after it (exclusive), nanoseconds. */
  readonly end: bigint | null;
}

export interface Schedule extends Timing {
  readonly id: string;
  /** How many occurrences run at most (skipped ones do not count). */
  readonly limit: number | null;
  /** Each occurrence fires up to this much after its nominal time (derived, never rolled again). */
  readonly jitter: bigint;
  readonly missed: MissedPolicy;
  /** How far back `missed: all` runs what was missed; older ones are skipped. */
  readonly catchup: bigint;
  readonly overlap: OverlapPolicy;
  readonly paused: boolean;
  /** Executed, and failed, occurrence jobs kept of each outcome: older ones are removed. */
  readonly keep: number;
}

/** A skip of `count` nominal times from `from` to `to` (inclusive), as it was decided. */
export interface SkipEntry {
  readonly reason: SkipReason;
  readonly from: bigint;
  readonly to: bigint;
  readonly count: number;
}

/**
 * A schedule as the daemon keeps and logs it: the spec and how far its occurrences are
 * decided. Every decision writes the whole of it again (a full-state record, as jobs are), so
 * the last record of a schedule is all a replay, a compaction or a restart needs.
 */
export interface ScheduleState {
  readonly schedule: Schedule;
  /** Every nominal time at or before this is decided (at first: when the schedule was made). */
  readonly decided: bigint;
  /**
   * The calendar's first nominal time after `decided` (null: none left before `end`), kept so
   * that a replay arms a million schedules without asking a calendar (~100 µs each for cron).
   */
  readonly next: bigint | null;
  /** Occurrences fired so far (manual runs not counted): `limit` counts these. */
  readonly fired: number;
  readonly skippedMissed: number;
  readonly skippedOverlap: number;
  /** The nominal time of an occurrence decided to fire once the running one ends (overlap `queue`). */
  readonly held: bigint | null;
  /** Nominal times of the occurrence jobs fired and not yet removed by retention, oldest first. */
  readonly fires: readonly bigint[];
  /** The instants of manual runs (run now) whose jobs are not yet removed, oldest first. */
  readonly manual: readonly bigint[];
  /** The latest skips, oldest first (SKIPS_KEPT at most). */
  readonly skips: readonly SkipEntry[];
}

/** Skips a schedule shows in its history. */
export const SKIPS_KEPT = 10;
/** What `keep` is when not given, and its bounds. */
export const DEFAULT_KEEP = 10;
export const MAX_KEEP = 1000;

/** One entry of a schedule's history (GET /schedules/{id}/occurrences). */
export interface OccurrenceView {
  /** The nominal time (a manual run's: when it was asked for); a skipped range's last. */
  readonly nominal: bigint;
  /** The occurrence's job, null for a skip. */
  readonly job: string | null;
  /** The job's status ('removed' once gone), or 'skipped'. */
  readonly outcome: 'planned' | 'triggered' | 'executed' | 'failed' | 'removed' | 'held' | 'skipped';
  readonly reason?: SkipReason;
  /** A skipped range: its first nominal time and how many it holds. */
  readonly from?: bigint;
  readonly count?: number;
  readonly manual?: boolean;
}

/** A schedule as the interfaces answer it: the state and its next nominal time. */
export interface ScheduleView {
  readonly state: ScheduleState;
  /** The next nominal time not decided yet, null when none is left (end, limit). */
  readonly next: bigint | null;
}
