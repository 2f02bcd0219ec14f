// Execution placement in cluster mode (issue 40; tickd(8) CLUSTER MODE "Where jobs run"): the
// parts of one node put together. Every node has an Executor (executor.ts) that runs what the
// leader sends it; the leader alone has a working Placer (placer.ts) that decides where each
// execution runs, and listens for the results the nodes send.
//
// Taking over, in order: the census (census.ts) asks every node what it still runs; the engine
// adopts those attempts; only then are the jobs the stream shows `triggered` and no node runs
// dispatched again, and only then are results taken (a result taken before its attempt was
// adopted would be stale). Results held meanwhile wait at their nodes, sent again until taken.
import { randomBytes } from 'node:crypto';
import type { Subscription } from '@nats-io/transport-node';
import type { PlacementView } from '../domain/cluster-view.ts';
import type { Attempt } from '../domain/attempt.ts';
import type { Execution } from '../runner/execution.ts';
import type { Members } from '../jetstream/members.ts';
import { takeCensus } from './census.ts';
import { Executor } from './executor.ts';
import { readResultBatch, type HeldAttempt, type PlacedResult } from './messages.ts';
import { Placer } from './placer.ts';
import { executorAddress, RESULTS_CONTEXT, resultsSubject, serve, type WireParts } from './wire.ts';

export interface PlacementParts extends WireParts {
  readonly node: string;
  readonly tags: readonly string[];
  /** This node's --max-inflight. */
  readonly capacity: number;
  /** The cluster's members as this node hears of them (lib/jetstream/members.ts). */
  readonly members: Pick<Members, 'candidates' | 'lost' | 'executorNames' | 'executor' | 'runOf'>;
  /** How long an execution waits for a node with its rule's tags, ms. */
  readonly waitMs: number;
  /** This node's runner processes. */
  readonly submit: (exec: Execution) => void;
  readonly wallNs: () => bigint;
  /**
   * Whether this node may take a result now: it leads and holds the lease by its own clock.
   * Checked at each result, not only at the step-down: after a stall, messages may be
   * handled before the timer that notices the lease ran out, and a result taken then would
   * be dropped (while the next leader may have adopted its attempt). None: always.
   */
  readonly mayTake?: () => boolean;
}

/** What placement needs of the leader's engine. */
export interface EngineSide {
  /** `durable`, when given: told once the result is applied and durable (not if the engine drops it). */
  result(r: PlacedResult, durable?: () => void): void;
  adopt(h: HeldAttempt): boolean;
  rerun(jobId: string, attempt: string): void;
  /** No node qualified in time: the attempt fails without running, with this record. */
  noNode(exec: Execution, record: Attempt): void;
  /** The jobs the stream shows `triggered` that no attempt runs: dispatched again. */
  redispatch(): void;
}

export class Placement {
  readonly executor: Executor;
  private readonly placer: Placer;
  private readonly p: PlacementParts;
  private engine: EngineSide | null = null;
  /** Set once a tenure's census is over: results are taken from then on. */
  private taking = false;
  private tenure = 0;
  private results: Subscription | null = null;
  /** This run of the process (ExecutorView.run). */
  private readonly run = randomBytes(8).toString('hex');

  constructor(parts: PlacementParts) {
    this.p = parts;
    this.executor = new Executor({ ...parts, address: executorAddress(parts.node, this.run), leading: () => (this.takes() ? this.take : null) });
    this.placer = new Placer({
      ...parts,
      run: this.run,
      local: this.executor,
      noNode: (exec, on, sinceNs) => this.engine?.noNode(exec, noNodeRecord(exec, on, sinceNs, parts.wallNs())),
      rerun: (jobId, attempt) => this.engine?.rerun(jobId, attempt),
      onLost: (node, executions) => parts.log.warn({ node, executions }, 'a node was lost, or restarted: what it held runs again elsewhere'),
    });
  }

  /** Starts taking runs from the leader and saying what this node runs. */
  start(engine: EngineSide): void {
    this.engine = engine;
    this.executor.start();
    this.p.members.executor = () => ({ tags: this.p.tags, capacity: this.p.capacity, running: this.executor.count, run: this.run });
  }

  /** Where the engine's executions go while this node leads. */
  dispatch(exec: Execution, on: readonly string[] | undefined): void {
    this.placer.place(exec, on);
  }

  waitingFor(jobId: string): { readonly on: readonly string[]; readonly sinceNs: bigint } | undefined {
    return this.placer.waitingFor(jobId);
  }

  view(): PlacementView {
    return this.placer.view();
  }

  /** The placement gauges: executions running here, and those this leader holds for want of a node. */
  counts(): { readonly running: number; readonly waiting: number } {
    return { running: this.executor.count, waiting: this.placer.waitingCount };
  }

  /** This node took the lease: census, adoption, re-dispatch, then results are taken. */
  promoted(): void {
    const tenure = ++this.tenure;
    this.placer.lead();
    const over = (): boolean => tenure !== this.tenure;
    const members = this.p.members;
    void takeCensus(this.p, members.executorNames(), (n) => executorAddress(n, members.runOf(n)), (n) => members.lost(n), over).then((answers) => {
      if (over()) return;
      const engine = this.engine!;
      let adopted = 0;
      for (const { node, held } of [{ node: this.p.node, held: this.executor.held() }, ...answers]) {
        for (const h of held) {
          if (!engine.adopt(h)) continue;
          this.placer.adopted(node, h.jobId, h.attempt);
          adopted++;
        }
      }
      if (adopted > 0) this.p.log.info({ executions: adopted }, 'executions still running on the nodes carried over to this leader');
      engine.redispatch();
      this.taking = true;
      this.results = serve(this.p, resultsSubject(this.p.cluster), '', RESULTS_CONTEXT, (payload, answer) => {
        const batch = readResultBatch(payload);
        if (batch === null || !this.takes()) return answer(null);
        if (batch.results.length === 0) return answer({ taken: [] });
        // Answered once every result is durable here: a node forgets a result only then, so a
        // leader dying before it wrote a result does not lose it (the node sends it again).
        let left = batch.results.length;
        for (const r of batch.results) this.take(r, () => { if (--left === 0) answer({ taken: batch.results.map((x) => x.attempt) }); });
      });
    });
  }

  /** This node stepped down: nothing is placed or taken here any more (the next leader adopts what runs). */
  demoted(): void {
    this.tenure++;
    this.taking = false;
    void this.results?.drain().catch(() => {});
    this.results = null;
    this.placer.stop();
  }

  private takes(): boolean {
    return this.taking && (this.p.mayTake?.() ?? true);
  }

  private readonly take = (r: PlacedResult, durable?: () => void): void => {
    this.placer.done(r.attempt);
    this.engine?.result(r, durable);
  };

  /** A graceful stop begins: this node takes no more runs. */
  stopTaking(): void {
    this.executor.stopTaking();
  }

  /** A graceful stop, once the runners are stopped: the results held go to the leader (bounded). */
  async close(ms: number): Promise<void> {
    this.demoted();
    await this.executor.settle(ms);
  }
}

/** The record of an attempt no node could take: it "ran" for nothing, from when it began to wait. */
function noNodeRecord(exec: Execution, on: readonly string[], sinceNs: bigint, nowNs: bigint): Attempt {
  const a: Attempt = {
    rule: exec.rule ?? null, runner: exec.runner.type, startedNs: nowNs, latenessNs: sinceNs - (exec.dueNs ?? exec.execution) - (exec.heldNs ?? 0n),
    durationNs: 0n, outcome: { kind: 'no_node', on },
  };
  return exec.attemptNo === undefined && exec.heldNs === undefined ? a : { ...a, number: exec.attemptNo ?? 1, heldNs: exec.heldNs ?? 0n };
}
