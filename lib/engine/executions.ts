// What the primary does with each execution the runner pool reports, beside the job's status:
// the attempt's record travels with the result to the engine (which keeps it as the job's
// last attempt, doc/execution.md "The attempt record"), and the metrics
// (tickd.toml(5) [telemetry]) and the activity window (GET /activity) count it. Due jobs no rule matched
// never reach the pool: the engine observer below counts them from the firing.
//
// Lateness is one figure everywhere: the wall time a runner started minus when the attempt was
// due (the job's execution time, or its retry's), less what a rule's limit held it (shown
// apart: `held_ns`), so "late because of my limit" never reads as "tickd is slow" (a due job
// no rule matched: the tick that fired it), so the histogram, the activity window and the
// attempt record agree.
import type { Attempt } from '../domain/attempt.ts';
import type { Job } from '../domain/job.ts';
import type { Execution } from '../runner/execution.ts';
import type { RunReport, RunnerPoolOptions } from '../runner/pool.ts';
import type { ExecutionResults } from './results.ts';
import type { JobInstruments } from '../telemetry/instruments.ts';
import type { ActivityRing } from './activity.ts';
import type { EngineObserver } from './engine.ts';

export interface ExecutionSinks {
  /** The engine's queue; in cluster mode this node's executor, which sends each result to the leader (lib/placement/). */
  readonly results: Pick<ExecutionResults, 'push'>;
  readonly activity: ActivityRing;
  /** null: no metrics (neither OTLP export nor an HTTP interface). */
  readonly instruments: JobInstruments | null;
}

const nsToMs = (ns: bigint): number => Number(ns) / 1e6;

/** The record of an execution the pool reported (or abandoned). */
export function attemptOf(exec: Execution, report: RunReport): Attempt {
  const a = {
    rule: exec.rule ?? null,
    runner: exec.runner.type,
    startedNs: report.startedNs,
    latenessNs: latenessOf(exec, report.startedNs),
    durationNs: report.durationNs,
    outcome: report.outcome,
  };
  // A first attempt nothing held stays the record it always was.
  return exec.attemptNo === undefined && exec.heldNs === undefined ? a : { ...a, number: exec.attemptNo ?? 1, heldNs: exec.heldNs ?? 0n };
}

/** The scheduler's own lateness: from when the attempt was due, less what its rule's limit held it. */
function latenessOf(exec: Execution, startedNs: bigint): bigint {
  return startedNs - (exec.dueNs ?? exec.execution) - (exec.heldNs ?? 0n);
}

/** The runner pool's callbacks. */
export function poolHooks(s: ExecutionSinks): Pick<RunnerPoolOptions, 'onStart' | 'onResult'> {
  return {
    onStart: (exec, startedNs) => {
      const latenessMs = nsToMs(latenessOf(exec, startedNs));
      s.instruments?.lateness(latenessMs);
      s.activity.recordLateness(nsToMs(startedNs), latenessMs);
    },
    onResult: (exec, success, durationMs, report) => {
      s.instruments?.executed(success, durationMs);
      s.instruments?.outcome(exec.runner.type, report.outcome.kind, success);
      s.activity.recordFinished(Date.now(), success);
      s.results.push(exec.jobId, exec.attempt, success, attemptOf(exec, report));
    },
  };
}

/** Counts every due job in the activity window, and a job no rule matched as failed there. */
export function activityObserver(activity: ActivityRing): EngineObserver {
  return {
    commandApplied(): void {},
    fired(job: Job, outcome: 'triggered' | 'no-rule', nowNs: bigint): void {
      const nowMs = nsToMs(nowNs);
      activity.recordFired(nowMs);
      if (outcome === 'no-rule') {
        activity.recordLateness(nowMs, nsToMs(nowNs - job.execution));
        activity.recordFinished(nowMs, false);
      }
    },
    finished(): void {},
  };
}
