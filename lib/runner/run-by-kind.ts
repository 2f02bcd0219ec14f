// Dispatch of one execution to the implementation of its runner's kind (the rule, and so the
// runner, was chosen when the job fired: lib/scheduler/firing.ts). Each log line of the attempt carries the
// attempt id, the job and the runner kind. Never rejects: a runner that throws anyway (a bug)
// still yields an outcome, a runner error.
import type { AttemptOutcome } from '../domain/attempt.ts';
import type { Logger } from '../log.ts';
import { runAmqp } from './amqp.ts';
import { runAwf } from './awf.ts';
import { runDirect } from './direct.ts';
import { errorText, runnerError, type Execution, type RunnerContext } from './execution.ts';
import { runHttp } from './http.ts';
import { runRedis } from './redis.ts';
import { runShell } from './shell.ts';

function dispatch(exec: Execution, ctx: RunnerContext, signal: AbortSignal): Promise<AttemptOutcome> {
  const runner = exec.runner;
  switch (runner.type) {
    case 'shell': return runShell(exec, runner, ctx, signal);
    case 'direct': return runDirect(exec, runner, ctx, signal);
    case 'awf': return runAwf(exec, runner, ctx, signal);
    case 'http': return runHttp(exec, runner, ctx, signal);
    case 'amqp': return runAmqp(exec, runner, ctx, signal);
    case 'redis': return runRedis(exec, runner, ctx, signal);
    default: {
      const unknownKind: never = runner;
      ctx.log.error({ runner: (unknownKind as { type?: unknown }).type }, 'unknown runner kind');
      return Promise.resolve(runnerError('unknown runner kind'));
    }
  }
}

export async function runExecution(exec: Execution, ctx: RunnerContext, signal: AbortSignal): Promise<AttemptOutcome> {
  const log: Logger = ctx.log.child({ attempt: exec.attempt, job: exec.jobId, runner: exec.runner.type }, true);
  try {
    return await dispatch(exec, { ...ctx, log }, signal);
  } catch (err) {
    log.error({ err: errorText(err) }, 'runner threw unexpectedly');
    return runnerError('the runner failed unexpectedly');
  }
}
