// The direct runner: argv [executable, ...args], no shell (tickd-protocol(7) RUNNERS). Every
// argument is passed as one literal argv element, so shell metacharacters in it have no effect.
import type { AttemptOutcome } from '../domain/attempt.ts';
import type { RunnerSpec } from '../domain/runner-spec.ts';
import type { Execution, RunnerContext } from './execution.ts';
import { runProcess } from './process.ts';

type DirectSpec = Extract<RunnerSpec, { type: 'direct' }>;

export function runDirect(exec: Execution, spec: DirectSpec, ctx: RunnerContext, signal: AbortSignal): Promise<AttemptOutcome> {
  return runProcess([spec.executable, ...spec.args], exec, ctx.log, signal);
}
