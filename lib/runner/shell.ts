// The shell runner: argv [shell.path, ...shell.args, command] (tickd-protocol(7) RUNNERS). The
// shell was checked at startup only; a shell that has since vanished makes the spawn fail, i.e.
// the job.
import type { AttemptOutcome } from '../domain/attempt.ts';
import type { RunnerSpec } from '../domain/runner-spec.ts';
import type { Execution, RunnerContext } from './execution.ts';
import { runProcess } from './process.ts';

type ShellSpec = Extract<RunnerSpec, { type: 'shell' }>;

export function runShell(exec: Execution, spec: ShellSpec, ctx: RunnerContext, signal: AbortSignal): Promise<AttemptOutcome> {
  return runProcess([ctx.shellPath, ...ctx.shellArgs, spec.command], exec, ctx.log, signal);
}
