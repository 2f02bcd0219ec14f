// What happens to each occurrence of a schedule (lib/schedule/README.md; issue 37): it fires (an
// occurrence job, occurrence.ts), or it is skipped, and why. Pure: the engine hands in how far
// the schedule is decided, what of it still runs, and the time, writes the decisions to the
// log before acting on them, and keeps `decided` from them, so that a replay, a restart or a
// new leader never decides a nominal time again.
//
// - An occurrence more than MISSED_AFTER_NS behind `now` when it is decided was missed (the
//   daemon was down, the schedule paused, no node led). Missed ones follow the schedule's
//   `missed` policy: `skip` skips them all; `once` fires the latest of them, unless one on time
//   is due as well, and skips the others; `all` fires each one within `catchup` of `now`, in
//   nominal order, and skips the older ones. A skip of several is one decision, a range.
// - `overlap`, for each occurrence that would fire while one of the schedule's still runs:
//   `allow` fires it; `skip` skips it; `queue` fires it held until the running one ends, unless
//   one is held already (then it is skipped). Whatever the policy, at most MAX_UNFINISHED of a
//   schedule's occurrences wait or run at once, so a runner that cannot keep up leaves a
//   backlog of bounded size, and a schedule's state a bounded record: one that comes round
//   beyond that is skipped for overlap, but `all` catching up stops there (`full`) and goes on
//   as they end, still within `catchup`: it runs each one, as it says.
// - `limit` counts occurrences that fire; once reached the schedule is over: nothing more is
//   decided, and nothing is recorded for what would have followed.
import { jitterOf } from './occurrence.ts';
import type { Calendar } from './calendar.ts';
import type { Schedule, SkipReason } from '../domain/schedule.ts';

/** How late an occurrence may be decided and still count as on time. */
export const MISSED_AFTER_NS = 1_000_000_000n;
/**
 * Nominal times counted into one skipped range at most (a cron expression is stepped through,
 * about 90 µs a step: 10 000 held the primary 0.9 s for one per-second schedule after 2.8 h).
 */
export const COUNT_CAP = 1_000;
/** Occurrences fired by one call at most: `all` after a long stop catches up over several. */
export const MAX_FIRES = 1_000;
/**
 * Occurrences of one schedule waiting or running at once, at most (overlap `allow`; the others
 * hold one or two). Each is a job, and the schedule's state lists it until it ends: 72 000 of
 * them (`all` catching up 20 h of seconds behind a runner that never ended) made a state record
 * the log cannot hold, rewritten with each decision.
 */
export const MAX_UNFINISHED = 1_000;

export type { SkipReason };

export type Decision =
  /** Fire the occurrence at `nominal` as a job due at `at` (nominal plus its jitter); `held` until the running one ends. */
  | { readonly t: 'fire'; readonly nominal: bigint; readonly at: bigint; readonly held: boolean }
  /** Skip the `count` nominal times from `from` to `to` (inclusive); `more` when there were more than counted. */
  | { readonly t: 'skip'; readonly reason: SkipReason; readonly from: bigint; readonly to: bigint; readonly count: number; readonly more: boolean };

export interface Progress {
  /** Every nominal time at or before this is decided (at first: when the schedule was made). */
  readonly decided: bigint;
  /** Occurrences fired so far: `limit` counts these. */
  readonly fired: number;
}

/** What of the schedule's occurrences is not over yet. */
export interface Busy {
  /** An occurrence fired earlier still runs (or waits to). */
  readonly running: boolean;
  /** One is held already (overlap `queue`). */
  readonly held: boolean;
  /** No more than this many fired earlier have not ended (the held one included). */
  readonly unfinishedAtMost: number;
  /** How many exactly: asked only when `unfinishedAtMost` could reach MAX_UNFINISHED. */
  unfinished(): number;
}

/**
 * The decisions for every nominal time in (progress.decided, upTo], in nominal order, and the
 * progress after them. `upTo` may be ahead of `now` (occurrence jobs made before they are due);
 * missed is judged against `now`.
 */
export function decide(s: Schedule, cal: Calendar, p: Progress, nowNs: bigint, busy: Busy, upTo: bigint = nowNs): { decisions: Decision[]; progress: Progress; full?: true } {
  const out: Decision[] = [];
  let fired = p.fired;
  let decided = p.decided;
  let running = busy.running;
  let held = busy.held;
  let firedHere = 0;
  let unfinished: number | null = null; // counted once, and only near the bound
  const over = (): boolean => s.limit !== null && fired >= s.limit;
  const full = (): boolean => {
    if (busy.unfinishedAtMost + firedHere < MAX_UNFINISHED) return false;
    unfinished ??= busy.unfinished();
    return unfinished + firedHere >= MAX_UNFINISHED;
  };
  const skip = (reason: SkipReason, after: bigint, to: bigint): void => {
    const first = cal.after(after);
    if (first === null || first > to) return;
    const { count, more } = cal.count(after, to, COUNT_CAP);
    out.push({ t: 'skip', reason, from: first, to, count, more });
    decided = to;
  };
  const fire = (nominal: bigint): void => {
    if (full() || (running && s.overlap === 'skip')) return skip('overlap', nominal - 1n, nominal);
    const hold = running && s.overlap === 'queue';
    if (hold && held) return skip('overlap', nominal - 1n, nominal);
    out.push({ t: 'fire', nominal, at: nominal + jitterOf(s.id, nominal, s.jitter), held: hold });
    fired++;
    firedHere++;
    decided = nominal;
    running = true;
    held ||= hold;
  };

  if (over()) return { decisions: out, progress: p };
  // Missed: nominal times before now - MISSED_AFTER_NS. The common case, the next one on
  // time, is told by one step forward: looking back (atOrBefore) costs more.
  const first = cal.after(decided);
  const missedBefore = minBig(nowNs - MISSED_AFTER_NS - 1n, upTo);
  const lastMissed = first === null || first > missedBefore ? null : cal.atOrBefore(missedBefore);
  if (lastMissed !== null && lastMissed > decided) {
    const onTimeToo = (() => {
      const next = cal.after(lastMissed);
      return next !== null && next <= upTo;
    })();
    if (s.missed === 'skip' || (s.missed === 'once' && onTimeToo)) {
      skip('missed', decided, lastMissed);
    } else if (s.missed === 'once') {
      const before = cal.atOrBefore(lastMissed - 1n);
      if (before !== null && before > decided) skip('missed', decided, before);
      fire(lastMissed);
    } else {
      // all: those within the catch-up window, oldest first, MAX_FIRES per call at most.
      const windowStart = nowNs - s.catchup;
      const lastTooOld = cal.atOrBefore(windowStart - 1n);
      if (lastTooOld !== null && lastTooOld > decided) skip('missed', decided, lastTooOld);
      for (let at = cal.after(decided); at !== null && at <= lastMissed && !over(); at = cal.after(decided)) {
        if (out.length >= MAX_FIRES) return { decisions: out, progress: { decided, fired } };
        if (full()) return { decisions: out, progress: { decided, fired }, full: true };
        fire(at);
      }
    }
  }
  for (let at = cal.after(decided); at !== null && at <= upTo && !over(); at = cal.after(decided)) {
    if (out.length >= MAX_FIRES) break;
    if (full()) {
      skip('overlap', decided, cal.atOrBefore(upTo) ?? upTo);
      break;
    }
    fire(at);
  }
  return { decisions: out, progress: { decided, fired } };
}

function minBig(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}
