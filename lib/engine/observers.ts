// Observers of the engine: the metric instruments (engineObserver), the debug log of every firing, with how late it
// fired (the tick's wall time minus the job's execution time). That lateness is the figure an
// operator tuning `framerate` wants, and the one bench/ measures against its target. And the
// warning of every failed job, at any log level from warn up (doc/execution.md "The attempt
// record"): one record per job that becomes `failed`, whatever its runner logged at debug, up
// to FAILURES_LOGGED_PER_SECOND a second; the rest of that second's failures are counted in one
// record when it ends. A webhook that is down under 10 000 jobs a second, or a burst of a
// million due jobs no rule matches, would otherwise write a record per job: CPU taken from the
// tick (a million records held the primary for seconds at a time) and a flooded log.
import type { SkipReason } from '../domain/schedule.ts';
import type { Attempt } from '../domain/attempt.ts';
import { describeOutcome } from '../domain/attempt.ts';
import type { Command, Reply } from '../domain/command.ts';
import type { Job } from '../domain/job.ts';
import type { Logger } from '../log.ts';
import type { JobInstruments } from '../telemetry/instruments.ts';
import type { EngineObserver } from './engine.ts';

/** Logs each due job at debug level: `job fired` with `outcome` and `lateness_ms`. */
export function firingLog(log: Logger): EngineObserver {
  return {
    commandApplied(): void {},
    fired(job: Job, outcome: 'triggered' | 'no-rule', nowNs: bigint): void {
      // Microsecond precision: the tick period at the highest framerate is 15 µs.
      const latenessMs = Number((nowNs - job.execution) / 1000n) / 1000;
      log.debug({ job: job.id, execution: job.execution.toString(), outcome, lateness_ms: latenessMs }, 'job fired');
    },
    finished(): void {},
  };
}

/** Failed jobs logged one by one per second at most; the others are counted. */
export const FAILURES_LOGGED_PER_SECOND = 100;
const WINDOW_MS = 1000;

/**
 * Logs each job that becomes `failed` once, at warn: `job failed` with the job, the rule, the
 * runner kind and the outcome in the runner's terms (`exit status 3`, `HTTP status 503`,
 * `network error: ...`, `no matching rule`). Never a stderr tail or a URL: error texts come
 * scrubbed of credentials from the runners. Past FAILURES_LOGGED_PER_SECOND in one second
 * (a window opened by its first failure), the others are counted, and one record at warn
 * closes the window: `jobs failed without a record of their own` with `jobs` (how many) and
 * `last_job` (the last of them).
 */
export function failureLog(log: Logger, now: () => number = () => performance.now()): EngineObserver & { flush(): void } {
  // `now`: the monotonic clock, in ms; a wall clock set back must not stretch a window.
  let windowEnd = -Infinity;
  let logged = 0;
  let unlogged = 0;
  let lastUnlogged = '';
  let timer: NodeJS.Timeout | null = null;
  const closeWindow = (): void => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    if (unlogged > 0) log.warn({ jobs: unlogged, last_job: lastUnlogged, window_ms: WINDOW_MS }, 'jobs failed without a record of their own');
    unlogged = 0;
  };
  return {
    commandApplied(): void {},
    fired(): void {},
    finished(jobId: string, success: boolean, attempt: Attempt | undefined): void {
      if (success) return;
      const at = now();
      if (at >= windowEnd) {
        closeWindow(); // its timer may not have run yet: the count is told before new records
        windowEnd = at + WINDOW_MS;
        logged = 0;
      }
      if (logged >= FAILURES_LOGGED_PER_SECOND) {
        if (unlogged++ === 0) timer = setTimeout(closeWindow, windowEnd - at).unref();
        lastUnlogged = jobId;
        return;
      }
      logged++;
      log.warn({
        job: jobId,
        rule: attempt?.rule ?? null,
        runner: attempt?.runner ?? null,
        outcome: attempt === undefined ? 'failed' : describeOutcome(attempt.outcome),
      }, 'job failed');
    },
    /** Tells the count of the open window now (a stop: its timer would not run). */
    flush: closeWindow,
  };
}

/** One observer calling each of `observers` in turn; undefined when there is none. */
export function combineObservers(observers: ReadonlyArray<EngineObserver | null>): EngineObserver | undefined {
  const all = observers.filter((o): o is EngineObserver => o !== null);
  if (all.length <= 1) return all[0];
  return {
    commandApplied(cmd: Command, reply: Reply): void {
      for (const o of all) o.commandApplied(cmd, reply);
    },
    fired(job: Job, outcome: 'triggered' | 'no-rule', nowNs: bigint): void {
      for (const o of all) o.fired(job, outcome, nowNs);
    },
    finished(jobId: string, success: boolean, attempt: Attempt | undefined): void {
      for (const o of all) o.finished(jobId, success, attempt);
    },
    skipped(reason: SkipReason, count: number): void {
      for (const o of all) o.skipped?.(reason, count);
    },
  };
}

/** The engine's observer feeding the instruments (executions come from the runner pool). */
export function engineObserver(instruments: JobInstruments): EngineObserver {
  return {
    commandApplied(cmd: Command, reply: Reply): void {
      if (!reply.ok) return;
      if (cmd.op === 'job.set') instruments.scheduled();
      else if (cmd.op === 'job.remove') instruments.removed();
    },
    fired(job: Job, outcome: 'triggered' | 'no-rule', nowNs: bigint): void {
      if (outcome !== 'no-rule') return; // a runner's start is told by the pool
      instruments.notRunnable();
      instruments.lateness(Number(nowNs - job.execution) / 1e6);
      instruments.outcome('none', 'no_rule', false);
    },
    finished(): void {},
    skipped: (reason, count) => instruments.scheduleSkipped(reason, count),
  };
}
