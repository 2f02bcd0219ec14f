// Where schedules become occurrence jobs (tickd-protocol(7) SCHEDULES; the pure rules are
// lib/schedule/decide.ts's). The tick asks, for each schedule whose due time has come, what
// happens to its nominal times up to the next one, and writes the answer before acting on it:
// the occurrence jobs first, then the schedule's new state with how far it is decided, both
// through Changes in the same commit. A replay, a restart or a compaction therefore finds
// every nominal time either decided (a job, or a skip in the state) or not, never half; and
// one decided is never decided again, as `decided` only grows (a job already there for an
// occurrence, as a torn group can leave, is taken as it is).
//
// Deciding ahead: with overlap `allow` a schedule is decided up to DECIDE_LEAD_MAX_NS before
// its next nominal time (spread by a hash of its identifier, never more than half its period),
// so that 100 000 schedules due at the top of a minute are decided over the seconds before it
// and their jobs then fire through the job heap like any other. With `skip` or `queue` whether
// one still runs is only known at the nominal time: those are decided then.
//
// Retention: each time a schedule is decided, its occurrence jobs beyond `keep` of each
// outcome (executed, failed) are removed, oldest first, and its history forgets them; manual
// runs are counted apart, with the same `keep`.
import type { Schedule, ScheduleState, SkipEntry, SkipReason } from '../domain/schedule.ts';
import { SKIPS_KEPT } from '../domain/schedule.ts';
import { Calendar } from '../schedule/calendar.ts';
import { decide, type Busy } from '../schedule/decide.ts';
import { manualId, occurrenceId } from '../schedule/occurrence.ts';
import { NO_SKIPS, NO_TIMES } from '../schedule/shared.ts';
import type { ScheduleStore } from '../store/schedules.ts';
import type { Changes, ReadonlyJobs } from './changes.ts';

/** The most a schedule is decided before its next nominal time. */
export const DECIDE_LEAD_MAX_NS = 10_000_000_000n;
/** Schedules decided per tick at most, and the time one tick may spend deciding (within the tick loop's TURN_BUDGET_NS). */
const DECIDE_SLICE = 256;
const DECIDE_SLICE_MS = 1;
const DECIDE_CHUNK = 16;
/** Manual runs of one schedule not yet ended at most: RUNs cannot grow its state without bound. */
export const MAX_MANUAL_WAITING = 1_000;
/** How soon a catch-up that MAX_UNFINISHED holds back is decided again. */
const FULL_RECHECK_NS = 1_000_000_000n;

export class Scheduling {
  private readonly changes: Changes;
  private readonly jobs: ReadonlyJobs;
  private readonly store: ScheduleStore;
  /** Schedules holding an occurrence back until the running one ends (overlap `queue`). */
  private readonly holding = new Set<string>();

  /** Told of each skip once it is logged (the metric of skips by reason). */
  private readonly skipped: (reason: SkipReason, count: number) => void;

  constructor(changes: Changes, jobs: ReadonlyJobs, store: ScheduleStore, skipped: (reason: SkipReason, count: number) => void = () => {}) {
    this.changes = changes;
    this.skipped = skipped;
    this.jobs = jobs;
    this.store = store;
    changes.onScheduleRestored = (id) => {
      const s = store.get(id);
      if (s !== undefined) this.arm(s);
    };
  }

  get schedules(): ScheduleStore {
    return this.store;
  }

  /**
   * After a replay (or a take-over): every schedule armed at its due time (a past one is decided
   * at the first tick) from the state alone, and those holding an occurrence back known again.
   */
  armAll(): void {
    this.holding.clear();
    for (const s of this.store.all()) {
      this.arm(s);
      if (s.held !== null) this.holding.add(s.schedule.id);
    }
  }

  /** Decides a slice of the schedules due at `nowNs`; true when more are due than one slice took. */
  step(nowNs: bigint): boolean {
    this.release(nowNs);
    const due = this.store.nextDue();
    if (due === undefined || due > nowNs) return false;
    const started = performance.now();
    // Taken a chunk at a time, and every schedule taken decided or armed again: takeDue
    // disarms what it returns, so one taken and left so would never be decided again.
    for (let n = 0; n < DECIDE_SLICE && (n === 0 || performance.now() - started < DECIDE_SLICE_MS);) {
      const chunk = this.store.takeDue(nowNs, DECIDE_CHUNK);
      if (chunk.length === 0) break;
      let i = 0;
      while (i < chunk.length && (i === 0 || performance.now() - started < DECIDE_SLICE_MS)) this.decideOne(chunk[i++]!, nowNs);
      // The budget is checked after each schedule: one decision can take tens of ms (a dense
      // cron expression's long skipped range, counted step by step). The rest are armed again,
      // due now, for the next tick.
      for (let j = i; j < chunk.length; j++) this.store.arm(chunk[j]!, nowNs);
      n += i;
      if (i < chunk.length) break;
    }
    const after = this.store.nextDue();
    return after !== undefined && after <= nowNs;
  }

  /** Creates or replaces a schedule: a replaced one keeps how far it is decided, less what was decided ahead. */
  set(schedule: Schedule, nowNs: bigint): ScheduleState {
    const prev = this.store.get(schedule.id);
    // The new calendar answers before anything changes: one that cannot must not leave the old
    // schedule's planned occurrences retracted (the answer is kept for save).
    const cal = new Calendar(schedule);
    cal.after(prev === undefined || prev.decided > nowNs ? nowNs : prev.decided);
    const state: ScheduleState = prev === undefined
      ? { schedule, decided: nowNs, next: null, fired: 0, skippedMissed: 0, skippedOverlap: 0, held: null, fires: NO_TIMES, manual: NO_TIMES, skips: NO_SKIPS }
      : { ...this.retract(prev, nowNs), schedule };
    return this.save(state, cal);
  }

  pause(id: string, paused: boolean, nowNs: bigint): ScheduleState | undefined {
    const prev = this.store.get(id);
    if (prev === undefined) return undefined;
    if (prev.schedule.paused === paused) return prev;
    const base = paused ? this.retract(prev, nowNs) : prev;
    return this.save({ ...base, schedule: { ...prev.schedule, paused } });
  }

  /**
   * Run now: an extra occurrence, due at once; returns its job identifier, or 'busy' when
   * MAX_MANUAL_WAITING runs of the schedule have not ended. Retention applies here too: a
   * schedule that is never decided (paused, over, a cron that never fires) still keeps `keep`.
   */
  run(id: string, nowNs: bigint): { state: ScheduleState; job: string } | 'busy' | undefined {
    const prev = this.store.get(id);
    if (prev === undefined) return undefined;
    let waiting = 0;
    for (const at of prev.manual) {
      const status = this.jobs.statusOf(manualId(id, at));
      if (status === 'planned' || status === 'triggered') waiting++;
    }
    if (waiting >= MAX_MANUAL_WAITING) return 'busy'; // refused before retention removes anything: nothing changes
    const kept = this.prune(prev.schedule, prev.fires, prev.manual);
    const job = manualId(id, nowNs);
    this.changes.putJob({ id: job, execution: nowNs, status: 'planned' });
    return { state: this.save({ ...prev, ...kept, manual: [...kept.manual, nowNs] }), job };
  }

  /** Removes a schedule and those of its occurrence jobs that have not fired; fired ones stay, as ordinary jobs. */
  remove(id: string): boolean {
    const prev = this.store.get(id);
    if (prev === undefined) return false;
    for (const nominal of prev.fires) this.dropPlanned(occurrenceId(id, nominal));
    for (const at of prev.manual) this.dropPlanned(manualId(id, at));
    this.holding.delete(id);
    this.changes.deleteSchedule(id);
    return true;
  }

  /** The next nominal time that will run: a planned occurrence's, else the calendar's. */
  next(state: ScheduleState): bigint | null {
    const s = state.schedule;
    let planned: bigint | null = null;
    for (const nominal of state.fires) {
      if (this.jobs.statusOf(occurrenceId(s.id, nominal)) === 'planned' && (planned === null || nominal < planned)) planned = nominal;
    }
    if (planned !== null) return planned;
    if (state.held !== null) return state.held;
    return s.paused || (s.limit !== null && state.fired >= s.limit) ? null : state.next;
  }


  private decideOne(id: string, nowNs: bigint): void {
    const state = this.store.get(id);
    if (state === undefined || state.schedule.paused) return;
    const s = state.schedule;
    const cal = new Calendar(s); // cheap: croner's parse is shared (calendar.ts)
    // The state keeps the calendar's answer after `decided`: not asked again.
    cal.knows(state.decided, state.next);
    const n = state.next;
    const upTo = n !== null && n > nowNs ? n : nowNs;
    const { decisions, progress, full } = decide(s, cal, { decided: state.decided, fired: state.fired }, nowNs, this.busy(state), upTo);
    // A catch-up held by MAX_UNFINISHED goes on as occurrences end: looked at again a second
    // later, not at every tick (each look counts what is unfinished).
    const notBefore = full === true ? nowNs + FULL_RECHECK_NS : undefined;
    if (decisions.length === 0 && progress.decided === state.decided) {
      this.arm(state, notBefore);
      return;
    }
    // Copied only when they change: a decision's garbage, and what it leaves in the old
    // generation, is what the collector pauses for while 100 000 schedules are decided.
    let fires: bigint[] | null = null;
    let skips: SkipEntry[] | null = null;
    let { skippedMissed, skippedOverlap, held } = state;
    for (const d of decisions) {
      if (d.t === 'skip') {
        (skips ??= [...state.skips]).push({ reason: d.reason, from: d.from, to: d.to, count: d.count });
        if (d.reason === 'missed') skippedMissed += d.count;
        else skippedOverlap += d.count;
      } else if (d.held) {
        held = d.nominal;
        this.holding.add(id);
      } else {
        const job = occurrenceId(id, d.nominal);
        if (this.jobs.statusOf(job) === undefined) this.changes.putJob({ id: job, execution: d.at, status: 'planned' });
        (fires ??= [...state.fires]).push(d.nominal);
      }
    }
    if (skips !== null && skips.length > SKIPS_KEPT) skips.splice(0, skips.length - SKIPS_KEPT);
    for (const d of decisions) if (d.t === 'skip') this.skipped(d.reason, d.count);
    const kept = this.prune(s, fires ?? state.fires, state.manual);
    // The same calendar: it answered after(decided) last, so saving asks croner nothing more.
    this.save({ ...state, ...kept, decided: progress.decided, fired: progress.fired, skippedMissed, skippedOverlap, held, skips: skips ?? state.skips }, cal, notBefore);
  }

  /** What of the schedule is not over yet: its latest occurrence still to run or running, one held. */
  private busy(state: ScheduleState): Busy {
    const id = state.schedule.id;
    const held = state.held !== null;
    const last = state.fires[state.fires.length - 1];
    return {
      running: held || (last !== undefined && this.unfinished(occurrenceId(id, last))),
      held,
      unfinishedAtMost: state.fires.length + (held ? 1 : 0),
      unfinished: () => state.fires.reduce((n, t) => (this.unfinished(occurrenceId(id, t)) ? n + 1 : n), held ? 1 : 0),
    };
  }

  private unfinished(job: string): boolean {
    const status = this.jobs.statusOf(job);
    return status === 'planned' || status === 'triggered';
  }

  /** Held occurrences whose predecessor has ended become jobs, due now. */
  private release(nowNs: bigint): void {
    if (this.holding.size === 0) return;
    for (const id of this.holding) {
      const state = this.store.get(id);
      if (state === undefined || state.held === null) {
        this.holding.delete(id);
        continue;
      }
      if (this.busy({ ...state, held: null }).running) continue;
      this.holding.delete(id);
      const job = occurrenceId(id, state.held);
      if (this.jobs.statusOf(job) === undefined) this.changes.putJob({ id: job, execution: nowNs, status: 'planned' });
      this.save({ ...state, held: null, fires: [...state.fires, state.held] });
    }
  }

  /** Planned occurrences after `nowNs` are taken back (their jobs removed) and undecided again. */
  private retract(state: ScheduleState, nowNs: bigint): ScheduleState {
    const id = state.schedule.id;
    const fires = state.fires.filter((nominal) => nominal <= nowNs || !this.dropPlanned(occurrenceId(id, nominal)));
    const held = state.held !== null && state.held > nowNs ? null : state.held;
    return { ...state, fires, held, decided: state.decided < nowNs ? state.decided : nowNs };
  }

  /** Removes job `id` if it is still planned; true when it did. */
  private dropPlanned(id: string): boolean {
    if (this.jobs.statusOf(id) !== 'planned') return false;
    this.changes.deleteJob(id);
    return true;
  }

  /** Occurrence jobs beyond `keep` of each outcome removed, newest kept; gone ones forgotten. A list left whole is returned as it was. */
  private prune(s: Schedule, fires: readonly bigint[], manual: readonly bigint[]): { fires: readonly bigint[]; manual: readonly bigint[] } {
    const { id, keep } = s;
    // Scheduled occurrences and manual runs are kept apart: a run now is not pushed out by the schedule's own.
    const keepOf = (list: readonly bigint[], jobOf: (t: bigint) => string): readonly bigint[] => {
      let executed = 0;
      let failed = 0;
      let kept: bigint[] | null = null; // newest first, made at the first one dropped
      for (let i = list.length - 1; i >= 0; i--) {
        const t = list[i]!;
        const jobId = jobOf(t);
        const status = this.jobs.statusOf(jobId);
        const over = (status === 'executed' && ++executed > keep) || (status === 'failed' && ++failed > keep);
        if (status === undefined || over) {
          if (over) this.changes.deleteJob(jobId);
          kept ??= list.slice(i + 1).reverse();
        } else if (kept !== null) {
          kept.push(t);
        }
      }
      return kept === null ? list : kept.reverse();
    };
    return { fires: keepOf(fires, (t) => occurrenceId(id, t)), manual: keepOf(manual, (t) => manualId(id, t)) };
  }

  /** Logs the state (with the calendar's next nominal time after `decided`) and arms it. */
  private save(without: ScheduleState, cal: Calendar = new Calendar(without.schedule), notBefore?: bigint): ScheduleState {
    const state = { ...without, next: cal.after(without.decided) };
    this.changes.putSchedule(state);
    if (state.held !== null) this.holding.add(state.schedule.id);
    this.arm(state, notBefore);
    return state;
  }

  /** Arms the schedule at the instant it must next be decided (not before `notBefore`), or disarms it (paused, over). */
  private arm(state: ScheduleState, notBefore?: bigint): void {
    const s = state.schedule;
    if (s.paused || (s.limit !== null && state.fired >= s.limit)) {
      this.store.arm(s.id, null);
      return;
    }
    const n = state.next;
    if (n === null) {
      this.store.arm(s.id, null);
      return;
    }
    const at = s.overlap === 'allow' ? n - leadOf(s.id, n - state.decided) : n;
    this.store.arm(s.id, notBefore !== undefined && at < notBefore ? notBefore : at);
  }
}

/** How long before a nominal time `gap` after the last decided one the schedule is decided: spread by its identifier. */
function leadOf(id: string, gap: bigint): bigint {
  const spread = fnv1a(id);
  const lead = 1_000_000_000n + (BigInt(spread) * (DECIDE_LEAD_MAX_NS - 1_000_000_000n)) / 0xffffffffn;
  const half = gap / 2n;
  return lead < half ? lead : half;
}

/** FNV-1a, 32 bits: a spread, not a secret (a SHA-256 per schedule was 2 s of a million-schedule replay). */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
