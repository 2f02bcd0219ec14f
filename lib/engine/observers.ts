// Observers of the engine beside telemetry: the debug log of every firing, with how late it
// fired (the tick's wall time minus the job's execution time). That lateness is the figure an
// operator tuning `framerate` wants, and the one bench/ measures against its target. And the
// warning of every failed job, at any log level from warn up (doc/execution.md "The attempt
// record"): one record per job that becomes `failed`, whatever its runner logged at debug.
import type { Attempt } from '../domain/attempt.ts';
import { describeOutcome } from '../domain/attempt.ts';
import type { Command, Reply } from '../domain/command.ts';
import type { Job } from '../domain/job.ts';
import type { Logger } from '../log.ts';
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

/**
 * Logs each job that becomes `failed` once, at warn: `job failed` with the job, the rule, the
 * runner kind and the outcome in the runner's terms (`exit status 3`, `HTTP status 503`,
 * `network error: ...`, `no matching rule`). Never a stderr tail or a URL: error texts come
 * scrubbed of credentials from the runners.
 */
export function failureLog(log: Logger): EngineObserver {
  return {
    commandApplied(): void {},
    fired(): void {},
    finished(jobId: string, success: boolean, attempt: Attempt | undefined): void {
      if (success) return;
      log.warn({
        job: jobId,
        rule: attempt?.rule ?? null,
        runner: attempt?.runner ?? null,
        outcome: attempt === undefined ? 'failed' : describeOutcome(attempt.outcome),
      }, 'job failed');
    },
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
  };
}
