// The bounded execution pool (tickd(8) OPTIONS, tickd-protocol(7) STATISTICS): at most
// `maxInflight` executions run at once; the rest wait in FIFO order. `pending` and `inflight`
// feed STAT executions_pending and executions_inflight.
//
// Invariants:
// - submit() is O(1) and never calls onResult synchronously: results always arrive from a
//   later microtask, so callers may submit while holding state they are still updating.
// - Every started execution yields exactly one onResult (a runner that throws or rejects
//   counts as failure), except those aborted by stop(): their results are not reported, as
//   the process is going away and the job stays `triggered` (re-dispatched after restart).
// - After stop() begins, nothing new starts: queued executions are dropped, later submits too.
import { performance } from 'node:perf_hooks';
import { errorText, type Execution, type RunnerContext, type RunnerFn } from './execution.ts';
import { runExecution } from './run-by-kind.ts';

export interface RunnerPoolOptions {
  maxInflight: number;
  ctx: RunnerContext;
  onResult: (exec: Execution, success: boolean, durationMs: number) => void;
  /** The runner dispatch; tests inject fakes. Defaults to runExecution. */
  run?: RunnerFn;
}

/** Dequeued slots are compacted away once at least this many sit before the head. */
const COMPACT_AFTER = 1024;
/** Milliseconds of starting executions per event-loop turn before yielding to other work. */
const START_BUDGET_MS_PER_TURN = 4;

export class RunnerPool {
  readonly maxInflight: number;
  readonly #ctx: RunnerContext;
  readonly #onResult: RunnerPoolOptions['onResult'];
  readonly #run: RunnerFn;
  #queue: (Execution | undefined)[] = [];
  #head = 0;
  readonly #running = new Set<AbortController>();
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
    this.#run = opts.run ?? runExecution;
  }

  /** Executions waiting for a slot. */
  get pending(): number {
    return this.#queue.length - this.#head;
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
    if (this.#running.size < this.maxInflight && this.#head === this.#queue.length && this.#budgetLeft()) this.#start(exec);
    else {
      this.#queue.push(exec);
      this.#nextTurn();
    }
  }

  // Starting an execution is synchronous and can be costly (a process spawn from a big heap
  // takes milliseconds), so starts are budgeted per event-loop turn: a burst of thousands of
  // due jobs is started over many turns, and commands, ticks and results are served between.
  #turnSpentMs = 0;
  #turnScheduled = false;

  #budgetLeft(): boolean {
    return this.#turnSpentMs < START_BUDGET_MS_PER_TURN;
  }

  #nextTurn(): void {
    if (this.#turnScheduled) return;
    this.#turnScheduled = true;
    setImmediate(() => {
      this.#turnScheduled = false;
      this.#turnSpentMs = 0;
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
    this.#queue = [];
    this.#head = 0;
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
    for (const controller of left) controller.abort();
  }

  #start(exec: Execution): void {
    const t0 = performance.now();
    this.#startOne(exec);
    this.#turnSpentMs += performance.now() - t0;
    this.#nextTurn();
  }

  #startOne(exec: Execution): void {
    const controller = new AbortController();
    this.#running.add(controller);
    const started = performance.now();
    let outcome: Promise<boolean>;
    try {
      outcome = Promise.resolve(this.#run(exec, this.#ctx, controller.signal));
    } catch (err) {
      outcome = Promise.reject(err);
    }
    outcome.then(
      (ok) => this.#finish(controller, exec, ok === true, performance.now() - started),
      (err: unknown) => {
        this.#ctx.log.error({ attempt: exec.attempt, job: exec.jobId, err: errorText(err) }, 'runner failed unexpectedly');
        this.#finish(controller, exec, false, performance.now() - started);
      },
    );
  }

  #finish(controller: AbortController, exec: Execution, ok: boolean, durationMs: number): void {
    // Not in the set any more: stop() gave up on it, its result is not reported.
    if (!this.#running.delete(controller)) return;
    try {
      this.#onResult(exec, ok, durationMs);
    } catch (err) {
      this.#ctx.log.error({ attempt: exec.attempt, job: exec.jobId, err: errorText(err) }, 'onResult threw');
    }
    this.#pump();
    if (this.#running.size === 0) this.#onIdle?.();
  }

  #pump(): void {
    while (!this.#stopped && this.#running.size < this.maxInflight && this.#head < this.#queue.length) {
      if (!this.#budgetLeft()) {
        this.#nextTurn();
        return;
      }
      const next = this.#queue[this.#head]!;
      this.#queue[this.#head] = undefined;
      this.#head += 1;
      if (this.#head >= COMPACT_AFTER && this.#head * 2 >= this.#queue.length) {
        this.#queue = this.#queue.slice(this.#head);
        this.#head = 0;
      }
      this.#start(next);
    }
    if (this.#head > 0 && this.#head === this.#queue.length) {
      this.#queue = [];
      this.#head = 0;
    }
  }
}
