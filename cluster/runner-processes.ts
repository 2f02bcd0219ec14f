// Where the primary's executions run (tickd(8) "Runner processes"; doc/execution.md): in runner
// child processes it owns (runner-link.ts for one child, runner-child.ts for the role). Toward
// the engine this is what the runner pool was in the primary: submit() takes an execution,
// onStart and onResult report it, `pending` and `inflight` feed STAT.
//
// Invariants:
// - At most maxInflight (--max-inflight) executions are handed to the children at once, in
//   all; the rest wait here in FIFO order. `inflight` counts the handed-over ones from the
//   moment they are handed over (a child starts them within its turn), `pending` the waiting
//   ones. An execution goes to the child with the fewest in flight.
// - Every execution submitted before stop() yields exactly one onResult, except those a stop
//   gives up on (onAbandoned; their jobs stay `triggered` and run again after a restart).
//   onStart precedes onResult, with the wall time the child started the runner.
// - A child that dies is replaced after a backoff (respawn-backoff.ts) and each attempt it
//   held fails at once with a runner_error saying so, plus one warn line. Failed, never sent
//   again: the child may have started it before dying (a webhook sent, a process spawned), so
//   sending it again could run a non-idempotent runner twice, and a job whose runner kills
//   its child would kill every child it reached. At most once per attempt.
// - After stop() begins nothing is handed over: the queue is dropped, later submits too.
// - The children exist only once some rule has a runner (use()): an idle daemon without rules
//   has none. Forked then, the fork holds the primary for a time that grows with its memory
//   (9.4 ms at 127 MB RSS, measured in a busy daemon), once; a job of the first rule due at
//   once waits for the child's start. They stay when the last rule goes. Each child loads
//   the module of a network kind (http, amqp, redis) once a rule uses it, not before
//   (tickd(8) "Runner processes").
import type { Logger } from '../lib/log.ts';
import { networkKinds, type NetworkKind, type RunnerSpec, type RunnerType } from '../lib/domain/runner-spec.ts';
import { ABORTED, runnerError, type Execution } from '../lib/runner/execution.ts';
import type { RunReport, RunnerPoolOptions } from '../lib/runner/pool.ts';
import { wallNowNs } from '../lib/clock.ts';
import type { ExecutionResponse, RunnerInit } from './ipc/runner-messages.ts';
import { Fifo } from '../lib/domain/fifo.ts';
import { RespawnBackoff } from './respawn-backoff.ts';
import { RunnerLink, type LinkEvents, type LinkOptions, type Sent } from './runner-link.ts';
import { errorText } from '../lib/errors.ts';

/** Old-space MB of a child: 128, or a quarter MB per execution allowed in flight when more. */
export function runnerHeapMb(maxInflight: number): number {
  return Math.max(128, Math.ceil(maxInflight / 4));
}


export interface RunnerProcessesOptions extends Pick<RunnerPoolOptions, 'onStart' | 'onResult' | 'onAbandoned'> {
  /** How many children (--runner-processes). */
  readonly count: number;
  readonly maxInflight: number;
  readonly init: Omit<RunnerInit, 'maxInflight' | 'kinds'>;
  readonly log: Logger;
  /** Test seam (LinkOptions.fork). */
  readonly fork?: LinkOptions['fork'];
}

const report = (startedNs: bigint, durationNs: bigint, outcome: RunReport['outcome']): RunReport => ({ startedNs, durationNs, outcome });

export class RunnerProcesses {
  readonly maxInflight: number;
  readonly #opts: RunnerProcessesOptions;
  readonly #log: Logger;
  readonly #links: (RunnerLink | null)[];
  readonly #backoffs: RespawnBackoff[];
  readonly #respawns = new Set<NodeJS.Timeout>();
  readonly #queue = new Fifo<Execution>();
  /** The network kinds some rule uses: every child loads their modules. */
  #kinds: readonly NetworkKind[] = [];
  #inflight = 0;
  #stopped = false;
  #stopping: Promise<void> | undefined;

  constructor(opts: RunnerProcessesOptions) {
    if (!Number.isSafeInteger(opts.maxInflight) || opts.maxInflight < 1) throw new RangeError(`maxInflight must be a positive integer, got ${opts.maxInflight}`);
    if (!Number.isSafeInteger(opts.count) || opts.count < 1) throw new RangeError(`count must be a positive integer, got ${opts.count}`);
    this.maxInflight = opts.maxInflight;
    this.#opts = opts;
    this.#log = opts.log;
    this.#links = Array.from({ length: opts.count }, () => null);
    this.#backoffs = Array.from({ length: opts.count }, () => new RespawnBackoff());
  }

  /** Forks the children (cheapest while the primary's heap is still small). */
  start(): void {
    for (let i = 0; i < this.#links.length; i++) if (this.#links[i] === null && !this.#stopped) this.#links[i] = this.#spawn(i);
  }

  /**
   * The runner types the rules use now (lib/store/rules.ts kinds()): the children are forked
   * at the first, and told of network kinds to load.
   */
  use(types: ReadonlySet<RunnerType>): void {
    if (types.size === 0 || this.#stopped) return;
    const added = networkKinds(types).filter((k) => !this.#kinds.includes(k));
    this.#kinds = [...this.#kinds, ...added];
    const forked = this.#links.some((l) => l !== null);
    if (!forked) return this.start(); // their init carries the kinds
    if (added.length > 0) for (const l of this.#links) l?.loadKinds(added);
  }

  /** Executions waiting to be handed to a child. */
  get pending(): number {
    return this.#queue.length;
  }

  /** Executions handed to a child and not answered yet. */
  get inflight(): number {
    return this.#inflight;
  }

  submit(exec: Execution): void {
    if (this.#stopped) {
      this.#log.debug({ attempt: exec.attempt, job: exec.jobId }, 'execution submitted after stop: dropped');
      return;
    }
    if (this.#queue.length === 0 && this.#inflight < this.maxInflight) {
      const link = this.#pick();
      if (link !== null) return this.#handOver(link, exec);
    }
    this.#queue.push(exec);
  }

  /**
   * The next due job's runner (lib/engine/lookahead.ts): the child its execution would go to
   * now readies what it needs, and is awake when it is due.
   */
  prepare(runner: RunnerSpec, awakeNs: bigint | null): void {
    if (!this.#stopped) this.#pick()?.prepare(runner, awakeNs);
  }

  /**
   * Stops handing over and asks every child to stop: executions running get graceMs, the rest
   * are aborted (onAbandoned). Resolves once every child has exited. Calling it again returns
   * the same promise.
   */
  stop(graceMs: number): Promise<void> {
    this.#stopping ??= this.#stop(graceMs);
    return this.#stopping;
  }

  async #stop(graceMs: number): Promise<void> {
    // Said, because the stop may now wait that long for them: whoever stops the daemon learns why.
    if (this.#inflight > 0) this.#log.info({ running: this.#inflight, graceMs }, 'stopping: running executions get the grace period, then are aborted');
    this.#halt();
    await Promise.all(this.#links.map((l) => l?.stop(graceMs)));
  }

  /** An abandoned start-up: the children are killed, nothing is reported. */
  kill(): void {
    this.#halt();
    for (const l of this.#links) l?.kill();
  }

  #halt(): void {
    this.#stopped = true;
    this.#queue.clear();
    for (const t of this.#respawns) clearTimeout(t);
    this.#respawns.clear();
  }

  /** The usable child with the fewest in flight, or null while none is. */
  #pick(): RunnerLink | null {
    let best: RunnerLink | null = null;
    for (const l of this.#links) if (l !== null && l.usable && (best === null || l.load < best.load)) best = l;
    return best;
  }

  #handOver(link: RunnerLink, exec: Execution): void {
    this.#inflight++;
    link.send(exec, wallNowNs());
  }

  #pump(): void {
    while (!this.#stopped && this.#inflight < this.maxInflight && this.#queue.length > 0) {
      const link = this.#pick();
      if (link === null) return;
      const next = this.#queue.shift()!;
      this.#handOver(link, next);
    }
  }

  #spawn(slot: number): RunnerLink {
    const init: RunnerInit = { ...this.#opts.init, maxInflight: this.maxInflight, kinds: this.#kinds };
    const link = new RunnerLink({ init, heapMb: runnerHeapMb(this.maxInflight), events: this.#events, ...(this.#opts.fork === undefined ? {} : { fork: this.#opts.fork }) });
    this.#links[slot] = link;
    this.#log.debug({ pid: link.pid, slot }, 'runner process started');
    return link;
  }

  readonly #events: LinkEvents = {
    started: (s) => this.#guard(s.exec, 'onStart', () => this.#opts.onStart?.(s.exec, s.startedNs!)),
    finished: (s, r) => {
      this.#inflight--;
      this.#report(s, r.success, r.startedNs, r.durationNs, r.outcome);
      this.#pump();
    },
    lost: (link, unanswered, code, signal) => {
      const slot = this.#links.indexOf(link);
      const why = `the runner process exited (${signal ?? `code ${code}`}) while the attempt ran`;
      const nowNs = wallNowNs();
      this.#inflight -= unanswered.length;
      for (const s of unanswered) {
        const startedNs = s.startedNs ?? s.sentNs;
        this.#report(s, false, startedNs, nowNs > startedNs ? nowNs - startedNs : 0n, runnerError(why));
      }
      if (slot < 0 || this.#stopped) return;
      const delay = this.#backoffs[slot]!.next(Date.now() - link.bornAt);
      this.#log.warn({ pid: link.pid, code, signal, failed: unanswered.length, respawnInMs: delay }, 'runner process died; the attempts it held failed; replacing it');
      const timer = setTimeout(() => {
        this.#respawns.delete(timer);
        if (this.#stopped) return;
        this.#spawn(slot);
        this.#pump();
      }, delay);
      this.#respawns.add(timer);
      this.#pump(); // another child may take the queue meanwhile
    },
    abandoned: (s, r) => {
      this.#inflight--;
      const startedNs = r?.startedNs ?? s.startedNs ?? s.sentNs;
      const rep = report(startedNs, r?.durationNs ?? 0n, ABORTED);
      this.#guard(s.exec, 'onAbandoned', () => this.#opts.onAbandoned?.(s.exec, rep));
    },
  };

  /** onStart (when the child never said it started) then onResult. */
  #report(s: Sent, success: boolean, startedNs: bigint, durationNs: bigint, outcome: ExecutionResponse['outcome']): void {
    if (s.startedNs === null) this.#guard(s.exec, 'onStart', () => this.#opts.onStart?.(s.exec, startedNs));
    const rep = report(startedNs, durationNs, outcome);
    this.#guard(s.exec, 'onResult', () => this.#opts.onResult(s.exec, success, Number(durationNs) / 1e6, rep));
  }

  #guard(exec: Execution, what: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.#log.error({ attempt: exec.attempt, job: exec.jobId, err: errorText(err) }, `${what} threw`);
    }
  }
}
