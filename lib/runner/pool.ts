// The bounded execution pool, run by each runner child process (cluster/runner-child.ts): at
// most `maxInflight` executions run at once; the rest wait in FIFO order. The primary holds
// --max-inflight itself and counts STAT executions_pending and executions_inflight
// (cluster/runner-processes.ts), so here the queue only ever holds the starts a turn's budget
// put off.
//
// Invariants:
// - submit() is O(1) and never calls onResult synchronously: results always arrive from a
//   later microtask, so callers may submit while holding state they are still updating.
// - Every started execution yields exactly one onStart, when its runner starts, and then
//   exactly one onResult (a runner that throws or rejects counts as failure, a runner error),
//   except those aborted by stop(): their results are not reported, as the process is going
//   away and the job stays `triggered` (re-dispatched after restart); onAbandoned hears of
//   each of them instead, with the outcome `aborted`.
// - A result carries the attempt's report: the wall time its runner started, how long it ran
//   (monotonic clock) and its outcome (lib/domain/attempt.ts).
// - After stop() begins, nothing new starts: queued executions are dropped, later submits too.
import { performance } from 'node:perf_hooks';
import { ABORTED, runnerError, type Execution, type RunnerContext, type RunnerFn } from './execution.ts';
import { outcomeSucceeded, type AttemptOutcome } from '../domain/attempt.ts';
import { wallNowNs } from '../clock.ts';
import { runExecution } from './run-by-kind.ts';
import { Fifo } from '../domain/fifo.ts';
import { errorText } from '../errors.ts';

/** How one execution went: when its runner started, for how long, and the outcome. */
export interface RunReport {
  /** Wall time the runner started, epoch nanoseconds. */
  readonly startedNs: bigint;
  readonly durationNs: bigint;
  readonly outcome: AttemptOutcome;
}

export interface RunnerPoolOptions {
  maxInflight: number;
  ctx: RunnerContext;
  /** `success` is outcomeSucceeded(report.outcome); durationMs is report.durationNs in ms. */
  onResult: (exec: Execution, success: boolean, durationMs: number, report: RunReport) => void;
  /** A runner is starting now (`startedNs`: wall time, epoch ns). */
  onStart?: (exec: Execution, startedNs: bigint) => void;
  /** stop() gave up on this execution: its result will never be reported. */
  onAbandoned?: (exec: Execution, report: RunReport) => void;
  /** The runner dispatch; tests inject fakes. Defaults to runExecution. */
  run?: RunnerFn;
}

interface Running {
  readonly exec: Execution;
  readonly startedNs: bigint;
  readonly startedHr: bigint;
}

/** Milliseconds of starting executions per event-loop turn before yielding to other work. */
const START_BUDGET_MS_PER_TURN = 4;
/**
 * The first turn after an idle spell starts only this much, so the first sockets of a burst
 * connect (and their requests leave) before a whole turn's worth of others is built.
 */
const FIRST_TURN_BUDGET_MS = 0.5;
const IDLE_TURN_SPENT_MS = START_BUDGET_MS_PER_TURN - FIRST_TURN_BUDGET_MS;

export class RunnerPool {
  readonly maxInflight: number;
  readonly #ctx: RunnerContext;
  readonly #onResult: RunnerPoolOptions['onResult'];
  readonly #onStart: RunnerPoolOptions['onStart'];
  readonly #onAbandoned: RunnerPoolOptions['onAbandoned'];
  readonly #run: RunnerFn;
  readonly #queue = new Fifo<Execution>();
  readonly #running = new Map<AbortController, Running>();
  #stopped = false;
  #stopping: Promise<void> | undefined;
  #onIdle: (() => void) | undefined;

  constructor(opts: RunnerPoolOptions) {
    if (!Number.isSafeInteger(opts.maxInflight) || opts.maxInflight < 1) {
      throw new RangeError(`maxInflight must be a positive integer, got ${opts.maxInflight}`);
    }
    this.maxInflight = opts.maxInflight;
    this.#ctx = opts.ctx;
    this.#onResult = opts.onResult;
    this.#onStart = opts.onStart;
    this.#onAbandoned = opts.onAbandoned;
    this.#run = opts.run ?? runExecution;
  }

  /** Executions waiting for a slot. */
  get pending(): number {
    return this.#queue.length;
  }

  /** Executions running now. */
  get inflight(): number {
    return this.#running.size;
  }

  submit(exec: Execution): void {
    if (this.#stopped) {
      this.#ctx.log.debug({ attempt: exec.attempt, job: exec.jobId }, 'execution submitted after stop: dropped');
      return;
    }
    if (this.#running.size < this.maxInflight && this.#queue.length === 0 && this.#budgetLeft()) this.#start(exec);
    else {
      this.#queue.push(exec);
      this.#nextTurn();
    }
  }

  // Starting an execution is synchronous and can be costly (a process spawn from a big heap
  // takes milliseconds), so starts are budgeted per event-loop turn: a burst of thousands of
  // due jobs is started over many turns, and commands, ticks and results are served between.
  #turnSpentMs = IDLE_TURN_SPENT_MS;
  #turnScheduled = false;

  #budgetLeft(): boolean {
    return this.#turnSpentMs < START_BUDGET_MS_PER_TURN;
  }

  #nextTurn(): void {
    if (this.#turnScheduled) return;
    this.#turnScheduled = true;
    setImmediate(() => {
      this.#turnScheduled = false;
      this.#turnSpentMs = this.#running.size === 0 && this.#queue.length === 0 ? IDLE_TURN_SPENT_MS : 0;
      this.#pump();
    });
  }

  /**
   * Stops starting executions, waits up to graceMs for the running ones, then aborts the rest
   * (their results are not reported). Resolves once nothing is left running or reportable.
   * Calling it again returns the same promise.
   */
  stop(graceMs: number): Promise<void> {
    this.#stopping ??= this.#stop(graceMs);
    return this.#stopping;
  }

  async #stop(graceMs: number): Promise<void> {
    this.#stopped = true;
    this.#queue.clear();
    if (this.#running.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.#onIdle = resolve;
        timer = setTimeout(resolve, Math.max(0, graceMs));
      });
      clearTimeout(timer);
      this.#onIdle = undefined;
    }
    const left = [...this.#running];
    this.#running.clear();
    if (left.length > 0) this.#ctx.log.warn({ aborted: left.length }, 'runner pool stopped with executions still running');
    const endHr = process.hrtime.bigint();
    for (const [controller, run] of left) {
      controller.abort();
      try {
        this.#onAbandoned?.(run.exec, { startedNs: run.startedNs, durationNs: endHr - run.startedHr, outcome: ABORTED });
      } catch (err) {
        this.#ctx.log.error({ attempt: run.exec.attempt, job: run.exec.jobId, err: errorText(err) }, 'onAbandoned threw');
      }
    }
  }

  #start(exec: Execution): void {
    const t0 = performance.now();
    this.#startOne(exec);
    this.#turnSpentMs += performance.now() - t0;
    this.#nextTurn();
  }

  #startOne(exec: Execution): void {
    const controller = new AbortController();
    const run: Running = { exec, startedNs: wallNowNs(), startedHr: process.hrtime.bigint() };
    this.#running.set(controller, run);
    try {
      this.#onStart?.(exec, run.startedNs);
    } catch (err) {
      this.#ctx.log.error({ attempt: exec.attempt, job: exec.jobId, err: errorText(err) }, 'onStart threw');
    }
    let outcome: Promise<AttemptOutcome>;
    try {
      outcome = Promise.resolve(this.#run(exec, this.#ctx, controller.signal));
    } catch (err) {
      outcome = Promise.reject(err);
    }
    outcome.then(
      (o) => this.#finish(controller, run, o),
      (err: unknown) => {
        this.#ctx.log.error({ attempt: exec.attempt, job: exec.jobId, err: errorText(err) }, 'runner failed unexpectedly');
        this.#finish(controller, run, runnerError('the runner failed unexpectedly'));
      },
    );
  }

  #finish(controller: AbortController, run: Running, outcome: AttemptOutcome): void {
    // Not in the map any more: stop() gave up on it, its result is not reported.
    if (!this.#running.delete(controller)) return;
    const exec = run.exec;
    const durationNs = process.hrtime.bigint() - run.startedHr;
    try {
      this.#onResult(exec, outcomeSucceeded(outcome), Number(durationNs) / 1e6, { startedNs: run.startedNs, durationNs, outcome });
    } catch (err) {
      this.#ctx.log.error({ attempt: exec.attempt, job: exec.jobId, err: errorText(err) }, 'onResult threw');
    }
    this.#pump();
    if (this.#running.size === 0) {
      this.#turnSpentMs = Math.max(this.#turnSpentMs, IDLE_TURN_SPENT_MS);
      this.#onIdle?.();
    }
  }

  #pump(): void {
    while (!this.#stopped && this.#running.size < this.maxInflight && this.#queue.length > 0) {
      if (!this.#budgetLeft()) {
        this.#nextTurn();
        return;
      }
      const next = this.#queue.shift()!;
      this.#start(next);
    }
  }
}
