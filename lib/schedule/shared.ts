// What many schedules hold alike, held once (issue 37 item 11: the primary's memory a schedule).
// A schedule set by a client arrives through IPC, whose copy makes every string and bigint
// new: 100 000 SCHEDULE SETs of `cron=0 0 1 1 *` held 100 000 copies each of the expression,
// `UTC`, `once` and `allow`, of 0n and 1h, and three empty lists a state (about 150 bytes a
// schedule, a fifth of it). The replay (lib/logfile/schedule-codec.ts) shares them the same way.
import type { MissedPolicy, OverlapPolicy, Schedule, SkipEntry } from '../domain/schedule.ts';
import { SCHEDULE_DEFAULTS } from './spec.ts';

export const MISSED_POLICIES: readonly MissedPolicy[] = ['skip', 'once', 'all'];
export const OVERLAP_POLICIES: readonly OverlapPolicy[] = ['allow', 'skip', 'queue'];
/** The engine makes a new list when it adds to one: an empty one can be everybody's. */
export const NO_TIMES: readonly bigint[] = Object.freeze([]);
export const NO_SKIPS: readonly SkipEntry[] = Object.freeze([]);

// Bounded: zone names are a few hundred, and expressions beyond the bound are merely not shared.
const INTERNED_MAX = 4096;
const interned = new Map<string, string>();

/** One string for equal zone names and cron expressions. */
export function intern(v: string): string {
  const known = interned.get(v);
  if (known !== undefined) return known;
  if (interned.size < INTERNED_MAX) interned.set(v, v);
  return v;
}

const sharedNs = (v: bigint, shared: bigint): bigint => (v === shared ? shared : v);

/** `s` holding the shared copies of what it has in common with other schedules. */
export function shareValues(s: Schedule): Schedule {
  return {
    ...s,
    cron: s.cron === null ? null : intern(s.cron),
    tz: intern(s.tz),
    jitter: sharedNs(s.jitter, SCHEDULE_DEFAULTS.jitter),
    catchup: sharedNs(s.catchup, SCHEDULE_DEFAULTS.catchup),
    missed: MISSED_POLICIES.find((m) => m === s.missed)!,
    overlap: OVERLAP_POLICIES.find((o) => o === s.overlap)!,
  };
}
