// The awf runner: `awf run <workflow> [--input k=v]...`, `awf` looked up on PATH at each
// execution (tickd-protocol(7) RUNNERS). When it is not on PATH the spawn fails with ENOENT:
// job failure.
import type { AttemptOutcome } from '../domain/attempt.ts';
import type { RunnerSpec } from '../domain/runner-spec.ts';
import type { Execution, RunnerContext } from './execution.ts';
import { runProcess } from './process.ts';

type AwfSpec = Extract<RunnerSpec, { type: 'awf' }>;

const AWF_COMMAND = 'awf';

export function awfArgv(spec: AwfSpec): string[] {
  const argv = [AWF_COMMAND, 'run', spec.workflow];
  for (const input of spec.inputs) argv.push('--input', input);
  return argv;
}

export function runAwf(exec: Execution, spec: AwfSpec, ctx: RunnerContext, signal: AbortSignal): Promise<AttemptOutcome> {
  return runProcess(awfArgv(spec), exec, ctx.log, signal);
}
