// Dispatch of one execution to the implementation of its runner's kind (the rule, and so the
// runner, was chosen when the job fired: lib/scheduler/firing.ts). Each log line of the attempt carries the
// attempt id, the job and the runner kind. Never rejects: a runner that throws anyway (a bug)
// still yields an outcome, a runner error.
//
// The network runners are loaded at the first execution of their kind: a runner child whose
// rules only spawn processes never loads amqplib or node-redis (most of its start-up: up to a
// second on a busy two-core machine, which a stop right after the start would wait for).
import type { AttemptOutcome } from '../domain/attempt.ts';
import type { Logger } from '../log.ts';
import { runAwf } from './awf.ts';
import { runDirect } from './direct.ts';
import { errorText, runnerError, type Execution, type RunnerContext } from './execution.ts';
import { runShell } from './shell.ts';

let http: Promise<typeof import('./http.ts')> | undefined;
let amqp: Promise<typeof import('./amqp.ts')> | undefined;
let redis: Promise<typeof import('./redis.ts')> | undefined;

function dispatch(exec: Execution, ctx: RunnerContext, signal: AbortSignal): Promise<AttemptOutcome> {
  const runner = exec.runner;
  switch (runner.type) {
    case 'shell': return runShell(exec, runner, ctx, signal);
    case 'direct': return runDirect(exec, runner, ctx, signal);
    case 'awf': return runAwf(exec, runner, ctx, signal);
    case 'http': return (http ??= import('./http.ts')).then((m) => m.runHttp(exec, runner, ctx, signal));
    case 'amqp': return (amqp ??= import('./amqp.ts')).then((m) => m.runAmqp(exec, runner, ctx, signal));
    case 'redis': return (redis ??= import('./redis.ts')).then((m) => m.runRedis(exec, runner, ctx, signal));
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
