// Dispatch of one execution to the implementation of its runner's kind (the rule, and so the
// runner, was chosen when the job fired: lib/engine/firing.ts). Each log line of the attempt carries the
// attempt id, the job and the runner kind. Never rejects: a runner that throws anyway (a bug)
// still yields an outcome, a runner error.
//
// The network runners are loaded apart from the child's start-up (most of it: up to a second on
// a busy two-core machine, which a stop right after the start would wait for), and only for a
// kind some rule uses: preloadRunners() (preload.ts) loads them once the child serves or when
// the first rule of the kind is set, so that the first job of a kind (the first POST of a
// burst) does not wait for a module load; a job that comes sooner waits for the same load.
import type { AttemptOutcome } from '../domain/attempt.ts';
import type { NetworkKind, RunnerSpec } from '../domain/runner-spec.ts';
import type { Logger } from '../log.ts';
import { runAwf } from './awf.ts';
import { runDirect } from './direct.ts';
import { runnerError, type Execution, type RunnerContext } from './execution.ts';
import { runShell } from './shell.ts';
import { errorText } from '../errors.ts';

/**
 * A runner module loaded on first use. Once loaded it is called synchronously: the pool
 * budgets the time its starts take per event-loop turn, and a start deferred to a microtask
 * would escape that budget, so a burst's starts would all run before the first socket connects.
 */
class LazyModule<M> {
  private loading: Promise<M> | undefined;
  private loaded: M | undefined;
  private readonly importer: () => Promise<M>;

  constructor(importer: () => Promise<M>) {
    this.importer = importer;
  }

  load(): Promise<M> {
    return (this.loading ??= this.importer().then((m) => (this.loaded = m)));
  }

  /** Whether load() was called. */
  get started(): boolean {
    return this.loading !== undefined;
  }

  /** `use` with the module: at once when it is loaded, else once it is. */
  with<T>(use: (m: M) => Promise<T>): Promise<T> {
    return this.loaded !== undefined ? use(this.loaded) : this.load().then(use);
  }
}

const http = new LazyModule(() => import('./http.ts'));
const amqp = new LazyModule(() => import('./amqp.ts'));
const redis = new LazyModule(() => import('./redis.ts'));

/**
 * Loads a network runner's module (a job of the kind that comes sooner waits for the same
 * load); true for the call that started the load, false when it was loading or loaded already.
 */
export function loadRunnerModule(kind: NetworkKind): Promise<boolean> {
  const lazy = kind === 'http' ? http : kind === 'amqp' ? amqp : redis;
  const fresh = !lazy.started;
  return lazy.load().then(() => fresh);
}

/**
 * Readies what a job of `runner` will need before it is due (the primary's lookahead,
 * lib/engine/lookahead.ts): for http, a connection to the rule's origin. Other kinds have
 * nothing to ready. Never throws.
 */
export function prepareRunner(runner: RunnerSpec, ctx: RunnerContext): void {
  if (runner.type === 'http') void http.with(async (m) => m.prepareHttp(runner, ctx)).catch(() => {});
}

function dispatch(exec: Execution, ctx: RunnerContext, signal: AbortSignal): Promise<AttemptOutcome> {
  const runner = exec.runner;
  switch (runner.type) {
    case 'shell': return runShell(exec, runner, ctx, signal);
    case 'direct': return runDirect(exec, runner, ctx, signal);
    case 'awf': return runAwf(exec, runner, ctx, signal);
    case 'http': return http.with((m) => m.runHttp(exec, runner, ctx, signal));
    case 'amqp': return amqp.with((m) => m.runAmqp(exec, runner, ctx, signal));
    case 'redis': return redis.with((m) => m.runRedis(exec, runner, ctx, signal));
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
