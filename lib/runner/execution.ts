// Shapes shared by every runner and the execution pool (in the runner child process; the
// primary builds the Executions, cluster/runner-processes.ts).
//
// An Execution is one attempt at running a job: `attempt` is the 128-bit id of its execution
// request (doc/execution.md: a result for a stale attempt never changes the job). A RunnerFn
// resolves to the attempt's outcome in the runner's own terms (lib/domain/attempt.ts: exit
// status, HTTP status, the broker's error...; outcomeSucceeded tells success) and NEVER
// rejects: every error a runner meets becomes a failed outcome, so the pool needs no error path.
//
// Environment (test-only): TICKD_RUNNER_TIMEOUT_MS overrides the 30 000 ms runner timeout
// (tickd(8) ENVIRONMENT) so tests can exercise timeouts quickly. Read only by
// runnerTimeoutMs(); production code never sets it.
import { clipHead, type AttemptOutcome } from '../domain/attempt.ts';
import type { RunnerSpec } from '../domain/runner-spec.ts';
import type { Logger } from '../log.ts';

export interface Execution {
  /** 128-bit attempt id, 32 lowercase hex characters. */
  attempt: string;
  jobId: string;
  /** The job's execution time, i64 nanoseconds since the epoch. */
  execution: bigint;
  runner: RunnerSpec;
  /** The identifier of the rule the runner came from (absent only in tests and benchmarks). */
  rule?: string;
  /** The attempt's number, 1 for the first run; absent means 1 (a job no retry policy touched). */
  attemptNo?: number;
  /** When this attempt was due (a retry's time; absent: `execution`): its lateness counts from here. */
  dueNs?: bigint;
  /** How long it waited for its rule's concurrency or rate limit, ns (absent: 0), counted apart from lateness. */
  heldNs?: bigint;
}

export interface RunnerContext {
  /** `[shell] path` and `[shell] args` from the configuration. */
  shellPath: string;
  shellArgs: string[];
  /** Connect/read/socket timeout of the network runners (runnerTimeoutMs() by default). */
  timeoutMs: number;
  log: Logger;
}

/** Never rejects; aborting `signal` ends the attempt (outcome then `aborted`). */
export type RunnerFn = (exec: Execution, ctx: RunnerContext, signal: AbortSignal) => Promise<AttemptOutcome>;

export const ABORTED: AttemptOutcome = Object.freeze({ kind: 'aborted' });

/** A runner that could not run at all; the text is clipped to the record's bound. */
export function runnerError(error: string): AttemptOutcome {
  return { kind: 'runner_error', error: clipHead(error) };
}

export const DEFAULT_RUNNER_TIMEOUT_MS = 30_000;

/** The runner timeout: 30 000 ms, or TICKD_RUNNER_TIMEOUT_MS (test-only) when it is a positive integer. */
export function runnerTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.TICKD_RUNNER_TIMEOUT_MS;
  if (raw === undefined || !/^[1-9][0-9]{0,9}$/.test(raw)) return DEFAULT_RUNNER_TIMEOUT_MS;
  return Number(raw);
}

