// Observers of the engine beside telemetry: the debug log of every firing, with how late it
// fired (the tick's wall time minus the job's execution time). That lateness is the figure an
// operator tuning `framerate` wants, and the one bench/ measures against its target.
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
    finished(jobId: string, success: boolean): void {
      for (const o of all) o.finished(jobId, success);
    },
  };
}
