// Shared fixtures for the runner tests: an execution, a RunnerContext whose logger captures
// every line at debug level, and a condition poller. Not a test file (no .test.ts suffix).
import bunyan from 'bunyan';
import type { RunnerSpec } from '../../lib/domain/runner-spec.ts';
import { newAttemptId } from '../../lib/engine/attempt-id.ts';
import type { Execution, RunnerContext } from '../../lib/runner/execution.ts';

export const EXECUTION_NS = 1_700_000_000_123_456_789n; // above 2^53: must survive exactly

export function makeExecution(runner: RunnerSpec, jobId = 'job.test.1'): Execution {
  return { attempt: newAttemptId(), jobId, execution: EXECUTION_NS, runner };
}

export interface CapturedContext {
  ctx: RunnerContext;
  /** Every log line written so far, as the JSON text bunyan produced. */
  lines: string[];
}

export function capturingContext(timeoutMs = 5000): CapturedContext {
  const lines: string[] = [];
  const log = bunyan.createLogger({
    name: 'tickd-test',
    level: bunyan.DEBUG,
    streams: [{ level: bunyan.DEBUG, stream: { write: (line: string) => { lines.push(line); } } as unknown as NodeJS.WritableStream }],
  });
  return { ctx: { shellPath: '/bin/sh', shellArgs: ['-c'], timeoutMs, log }, lines };
}

/** Polls `check` until it returns true; rejects after timeoutMs. */
export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export function neverAborted(): AbortSignal {
  return new AbortController().signal;
}
