// Shapes shared by every runner and the execution pool (primary side).
//
// An Execution is one attempt at running a job: `attempt` is the 128-bit id of its execution
// request (doc/execution.md: a result for a stale attempt never changes the job). A RunnerFn
// resolves true on success and false on failure and NEVER rejects: every error a runner meets
// becomes `false` plus a log line, so the pool needs no error path.
//
// Environment (test-only): TICKD_RUNNER_TIMEOUT_MS overrides the 30 000 ms runner timeout
// (tickd(8) ENVIRONMENT) so tests can exercise timeouts quickly. Read only by
// runnerTimeoutMs(); production code never sets it.
import { randomBytes } from 'node:crypto';
import type { RunnerSpec } from '../domain/runner-spec.ts';
import type { Logger } from '../log.ts';

export interface Execution {
  /** 128-bit attempt id, 32 lowercase hex characters. */
  attempt: string;
  jobId: string;
  /** The job's execution time, i64 nanoseconds since the epoch. */
  execution: bigint;
  runner: RunnerSpec;
}

export interface RunnerContext {
  /** `[shell] path` and `[shell] args` from the configuration. */
  shellPath: string;
  shellArgs: string[];
  /** Connect/read/socket timeout of the network runners (runnerTimeoutMs() by default). */
  timeoutMs: number;
  log: Logger;
}

/** true = success. Never rejects; aborting `signal` ends the attempt (result then false). */
export type RunnerFn = (exec: Execution, ctx: RunnerContext, signal: AbortSignal) => Promise<boolean>;

export const DEFAULT_RUNNER_TIMEOUT_MS = 30_000;

export function newAttemptId(): string {
  return randomBytes(16).toString('hex');
}

/** The runner timeout: 30 000 ms, or TICKD_RUNNER_TIMEOUT_MS (test-only) when it is a positive integer. */
export function runnerTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.TICKD_RUNNER_TIMEOUT_MS;
  if (raw === undefined || !/^[1-9][0-9]{0,9}$/.test(raw)) return DEFAULT_RUNNER_TIMEOUT_MS;
  return Number(raw);
}

/** A short, single-line description of an error for log lines. */
export function errorText(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    const message = err.message || err.name;
    return typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message;
  }
  return String(err);
}
