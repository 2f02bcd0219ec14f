// The leader's side of execution placement (tickd(8) CLUSTER MODE "Where jobs run"): where each
// execution the engine starts runs. A node qualifies when it said lately that it runs what the
// leader sends (lib/jetstream/members.ts) and has every tag the job's rule requires (`on`); of
// those, the one with the fewest executions placed on it for its capacity (its --max-inflight)
// gets it, this node first among equals (no network hop).
//
// Invariants:
// - Every execution handed to place() ends in exactly one of: a node's result (done()), the
//   engine running it again under a new attempt because its node was lost (rerun), or, when no
//   node qualified within the wait bound, a no_node failure. Stepping down (stop()) forgets all
//   of it: the next leader's census adopts what still runs.
// - A node is given up only once members.ts says it is lost (gone, or silent for LOSS_MS):
//   never for being slow to answer. A run sent to a node nobody listens for (NoResponders) was
//   received by no one, and goes elsewhere at once; one not answered may have been received, and
//   is sent again to the same node (a node runs an attempt once, executor.ts).
import type { ExecutorView, PlacementView } from '../domain/cluster-view.ts';
import { hasTags } from '../domain/node-tags.ts';
import type { Execution } from '../runner/execution.ts';
import type { Executor } from './executor.ts';
import { ask, encode, EXEC_CONTEXT, execSubject, executorAddress, NO_ANSWER, NOBODY, type WireParts } from './wire.ts';

const CHECK_MS = 250;
const ANSWER_WAIT_MS = 5_000;
const RESEND_MS = 1_000;
/** A node nobody listened for is not placed on for this long. */
const UNREACHABLE_MS = 2_000;
const EVERYWHERE: readonly string[] = [];
/** The members' view is read again at most this often: a burst places thousands in one turn. */
const CANDIDATES_FRESH_MS = 50;

export interface PlacerParts extends WireParts {
  readonly node: string;
  readonly tags: readonly string[];
  readonly capacity: number;
  readonly local: Executor;
  readonly members: {
    candidates(): Array<{ readonly name: string; readonly executor: ExecutorView }>;
    lost(name: string): boolean;
    runOf(name: string): string | undefined;
  };
  /** This node's run (ExecutorView.run). */
  readonly run: string;
  /** How long an execution waits for a node with its rule's tags before it fails, ms. */
  readonly waitMs: number;
  /** No node qualified in time: the attempt fails without running (outcome no_node). */
  readonly noNode: (exec: Execution, on: readonly string[], sinceNs: bigint) => void;
  /** The node running `attempt` of `jobId` is lost: the engine runs the job again under a new attempt. */
  readonly rerun: (jobId: string, attempt: string) => void;
  /** Told once per node found lost, with the executions given away. */
  readonly onLost?: (node: string, executions: number) => void;
  readonly wallNs: () => bigint;
}

interface Placed {
  readonly node: string;
  /** When it was first placed or began to wait (performance.now(), and the wall clock in ns). */
  readonly since: number;
  readonly sinceNs: bigint;
  /** The run of the node's process it was given to: one that restarted does not hold it. */
  readonly run: string | undefined;
  readonly jobId: string;
  readonly exec: Execution | null;
  readonly on: readonly string[];
}

interface Waiting {
  readonly exec: Execution;
  readonly on: readonly string[];
  readonly since: number;
  readonly sinceNs: bigint;
}

export class Placer {
  private readonly p: PlacerParts;
  private readonly placed = new Map<string, Placed>();
  private readonly load = new Map<string, number>();
  private readonly waiting = new Map<string, Waiting>();
  /** Runs to send this turn, by node. */
  private readonly outbox = new Map<string, Execution[]>();
  private readonly unreachable = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private flushing = false;
  /** Ends with each tenure: what a send of an earlier one learns is dropped. */
  private tenure = 0;
  private candidates: Array<{ readonly name: string; readonly executor: ExecutorView }> = [];
  private candidatesAt = -Infinity;
  /** The run of each node's process as last checked (check()). */
  private readonly runs = new Map<string, string | undefined>();

  constructor(parts: PlacerParts) {
    this.p = parts;
  }

  lead(): void {
    this.tenure++;
    this.timer ??= setInterval(() => this.check(), CHECK_MS).unref();
  }

  /** Stepping down: nothing placed is followed any more (the next leader adopts what runs). */
  stop(): void {
    this.tenure++;
    clearInterval(this.timer);
    this.timer = undefined;
    this.placed.clear();
    this.load.clear();
    this.waiting.clear();
    this.outbox.clear();
    this.runs.clear();
  }

  /** Where `exec` runs: a qualifying node now, or once one is (up to the wait bound). */
  place(exec: Execution, on: readonly string[] = EVERYWHERE): void {
    this.placeSince(exec, on, performance.now(), this.p.wallNs());
  }

  /** As place(); an execution that waits, waits from `since` (one sent back keeps its first wait's start). */
  private placeSince(exec: Execution, on: readonly string[], since: number, sinceNs: bigint): void {
    const node = this.choose(on);
    if (node === null) this.waiting.set(exec.jobId, { exec, on, since, sinceNs });
    else this.assign(exec, on, node, since, sinceNs);
  }

  /** A result of `attempt` was taken (whichever node it came from). */
  done(attempt: string): void {
    const placed = this.placed.get(attempt);
    if (placed === undefined) return;
    this.placed.delete(attempt);
    this.count(placed.node, -1);
  }

  /** A census found `attempt` running (or finished) on `node`, and the engine adopted it. */
  adopted(node: string, jobId: string, attempt: string): void {
    const run = node === this.p.node ? this.p.run : this.p.members.runOf(node);
    this.placed.set(attempt, { node, jobId, exec: null, on: EVERYWHERE, run, since: performance.now(), sinceNs: this.p.wallNs() });
    this.count(node, 1);
  }

  /** Why job `jobId` has not started: it waits for a node with these tags since then. */
  waitingFor(jobId: string): { readonly on: readonly string[]; readonly sinceNs: bigint } | undefined {
    return this.waiting.get(jobId);
  }

  /** Executions waiting for a node. */
  get waitingCount(): number {
    return this.waiting.size;
  }

  view(): PlacementView {
    return { waiting: this.waiting.size, placed: Object.fromEntries([...this.load].filter(([, n]) => n > 0)) };
  }

  private choose(on: readonly string[]): string | null {
    let best: string | null = null;
    let bestLoad = Infinity;
    const consider = (name: string, ex: ExecutorView): void => {
      if (!hasTags(ex.tags, on)) return;
      if (name === this.p.node && !this.p.local.taking) return; // stopping: takes nothing more
      const until = this.unreachable.get(name);
      if (until !== undefined && until > performance.now()) return;
      const load = (this.load.get(name) ?? 0) / ex.capacity;
      if (load < bestLoad) {
        best = name;
        bestLoad = load;
      }
    };
    consider(this.p.node, { tags: this.p.tags, capacity: this.p.capacity, running: 0, run: this.p.run });
    const now = performance.now();
    if (now - this.candidatesAt > CANDIDATES_FRESH_MS) {
      this.candidates = this.p.members.candidates();
      this.candidatesAt = now;
    }
    for (const c of this.candidates) consider(c.name, c.executor);
    return best;
  }

  private assign(exec: Execution, on: readonly string[], node: string, since: number, sinceNs: bigint): void {
    const run = node === this.p.node ? this.p.run : this.p.members.runOf(node);
    this.placed.set(exec.attempt, { node, jobId: exec.jobId, exec, on, run, since, sinceNs });
    this.count(node, 1);
    if (node === this.p.node) {
      this.p.local.run(exec);
      return;
    }
    const box = this.outbox.get(node);
    if (box === undefined) this.outbox.set(node, [exec]);
    else box.push(exec);
    if (!this.flushing) {
      this.flushing = true;
      setImmediate(() => this.flush());
    }
  }

  private count(node: string, by: number): void {
    const n = (this.load.get(node) ?? 0) + by;
    if (n <= 0) this.load.delete(node);
    else this.load.set(node, n);
  }

  private flush(): void {
    this.flushing = false;
    for (const [node, execs] of this.outbox) void this.deliver(node, execs, this.tenure);
    this.outbox.clear();
  }

  private async deliver(node: string, execs: readonly Execution[], tenure: number): Promise<void> {
    if (execs.length === 0) return;
    let batch = execs;
    let run = encode(this.p, { op: 'run', execs: batch });
    while (batch.length > 1 && !run.fits) {
      batch = batch.slice(0, batch.length >> 1);
      run = encode(this.p, { op: 'run', execs: batch });
    }
    if (batch.length < execs.length) void this.deliver(node, execs.slice(batch.length), tenure);
    // To the process they were given to: one restarted since refuses them (check() gives them away).
    const to = executorAddress(node, this.placed.get(batch[0]!.attempt)?.run);
    const answer = await ask(this.p, execSubject(this.p.cluster, node), to, EXEC_CONTEXT, run, ANSWER_WAIT_MS);
    if (tenure !== this.tenure) return;
    const still = batch.filter((e) => this.placed.get(e.attempt)?.node === node);
    const stale = typeof answer === 'object' && answer !== null && (answer as { stale?: unknown }).stale === true;
    if (still.length === 0 || (answer !== NOBODY && answer !== NO_ANSWER && !stale)) return;
    if (answer === NOBODY || stale) {
      // Received by no one, or refused as sealed too long ago (the node was stopped a while,
      // or its clock is off): placed anew, elsewhere while this node is unreachable.
      this.unreachable.set(node, performance.now() + UNREACHABLE_MS);
      for (const e of still) {
        const { on, since, sinceNs } = this.placed.get(e.attempt)!;
        this.done(e.attempt);
        this.placeSince(e, on, since, sinceNs); // a wait for a node counts from the first placement
      }
      return;
    }
    // Maybe received: sent again (the node runs an attempt once) until it answers or is lost,
    // but only while the node is heard of: a run sealed anew while it is stopped would wait in
    // its socket, fresh, and run when it resumes, after the run was given away (executor.ts
    // refuses only runs sealed RUN_FRESH_MS ago).
    this.resendLater(node, still, tenure);
  }

  private resendLater(node: string, execs: readonly Execution[], tenure: number): void {
    setTimeout(() => {
      if (tenure !== this.tenure || this.p.members.lost(node)) return;
      const left = execs.filter((e) => this.placed.get(e.attempt)?.node === node);
      if (left.length === 0) return;
      if (this.p.members.candidates().some((c) => c.name === node)) void this.deliver(node, left, tenure);
      else this.resendLater(node, left, tenure);
    }, RESEND_MS).unref();
  }

  private check(): void {
    const now = performance.now();
    for (const [jobId, w] of this.waiting) {
      const node = this.choose(w.on);
      if (node !== null) {
        this.waiting.delete(jobId);
        this.assign(w.exec, w.on, node, w.since, w.sinceNs);
      } else if (now - w.since >= this.p.waitMs) {
        this.waiting.delete(jobId);
        this.p.noNode(w.exec, w.on, w.sinceNs);
      }
    }
    for (const node of this.load.keys()) {
      if (node === this.p.node) continue;
      if (this.p.members.lost(node)) this.giveAway(node, undefined);
      else {
        // Restarted under the same name: the new process holds nothing the old one was given.
        const run = this.p.members.runOf(node);
        if (run !== this.runs.get(node)) {
          if (this.runs.has(node)) this.giveAway(node, run);
          this.runs.set(node, run);
        }
      }
    }
  }

  /**
   * What `node` held runs again elsewhere, under new attempts (late results of the old ones are
   * stale): all of it when the node is lost (`run` undefined), else what an earlier run held.
   */
  private giveAway(node: string, run: string | undefined): void {
    const lost: Array<[string, Placed]> = [];
    for (const entry of this.placed) if (entry[1].node === node && (run === undefined || entry[1].run !== run)) lost.push(entry);
    for (const [attempt] of lost) this.done(attempt);
    if (run === undefined) this.runs.delete(node);
    if (lost.length > 0) this.p.onLost?.(node, lost.length);
    for (const [attempt, placed] of lost) this.p.rerun(placed.jobId, attempt);
  }
}
