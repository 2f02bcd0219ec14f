// Stand-ins for what lib/placement/ is given by the daemon (cluster/primary.ts), for tests that
// run several Placement instances in one process on a real nats-server: the members' view
// (lib/jetstream/members.ts) made from the other instances of the same FakeCluster, the
// runner processes (a submit that records) and the leader's engine (an EngineSide that
// records). Which node is lost, and which attempts a new leader adopts, the test decides.
import { randomBytes } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Attempt } from '../../lib/domain/attempt.ts';
import type { ExecutorView } from '../../lib/domain/cluster-view.ts';
import type { HeldAttempt, PlacedResult } from '../../lib/placement/messages.ts';
import { Placement, type EngineSide } from '../../lib/placement/placement.ts';
import { executorAddress } from '../../lib/placement/wire.ts';
import type { Execution } from '../../lib/runner/execution.ts';
import { silentLogger } from '../../lib/log.ts';
import { testKeys } from './cluster-secret.ts';
import { connectNats } from './nats.ts';
import { waitFor } from './client.ts';

/** What the leader's engine was told, in order (`events`), and which attempts it adopts. */
export class FakeEngine implements EngineSide {
  readonly results: PlacedResult[] = [];
  readonly adopted: HeldAttempt[] = [];
  readonly reruns: Array<{ readonly jobId: string; readonly attempt: string }> = [];
  readonly noNodes: Array<{ readonly exec: Execution; readonly record: Attempt }> = [];
  readonly events: string[] = [];
  /** Attempts adopt() says yes to (the engine's attempt is current). */
  readonly adoptable = new Set<string>();
  redispatched = 0;

  /** While set, a result is not made durable at once: its callback waits in `undurable`. */
  holdDurable = false;
  readonly undurable: Array<() => void> = [];

  result(r: PlacedResult, durable?: () => void): void {
    this.results.push(r);
    this.events.push(`result ${r.attempt}`);
    if (durable === undefined) return;
    if (this.holdDurable) this.undurable.push(durable);
    else durable();
  }

  adopt(h: HeldAttempt): boolean {
    this.adopted.push(h);
    this.events.push(`adopt ${h.attempt}`);
    return this.adoptable.has(h.attempt);
  }

  rerun(jobId: string, attempt: string): void {
    this.reruns.push({ jobId, attempt });
    this.events.push(`rerun ${attempt}`);
  }

  noNode(exec: Execution, record: Attempt): void {
    this.noNodes.push({ exec, record });
    this.events.push(`noNode ${exec.attempt}`);
  }

  redispatch(): void {
    this.redispatched++;
    this.events.push('redispatch');
  }
}

export interface FakeNode {
  readonly name: string;
  readonly nc: NatsConnection;
  readonly placement: Placement;
  readonly engine: FakeEngine;
  /** What this node's runner processes were handed. */
  readonly submitted: Execution[];
}

type Members = ConstructorParameters<typeof Placement>[0]['members'];

/** The nodes of one cluster name, each hearing of the others as members.ts would. */
export class FakeCluster {
  readonly name: string;
  readonly url: string;
  /** Nodes members.ts says are lost (gone, or silent too long). */
  readonly lost = new Set<string>();
  private readonly said = new Map<string, Members>();
  private readonly nodes: FakeNode[] = [];

  constructor(name: string, url: string) {
    this.name = name;
    this.url = url;
  }

  /** A started node on its own NATS connection (it runs what a leader sends; it leads once promoted()). */
  async node(name: string, opts: { tags?: readonly string[]; capacity?: number; waitMs?: number } = {}): Promise<FakeNode> {
    const nc = await connectNats(this.url);
    const engine = new FakeEngine();
    const submitted: Execution[] = [];
    const members = this.membersOf(name);
    this.said.set(name, members);
    const placement = new Placement({
      nc, keys: testKeys, cluster: this.name, log: silentLogger(), node: name, members,
      tags: opts.tags ?? [], capacity: opts.capacity ?? 4, waitMs: opts.waitMs ?? 300,
      submit: (exec) => { submitted.push(exec); }, wallNs: () => BigInt(Date.now()) * 1_000_000n,
    });
    placement.start(engine);
    await nc.flush(); // its executor's subscription is at the server before anyone sends to it
    const node = { name, nc, placement, engine, submitted };
    this.nodes.push(node);
    return node;
  }

  /** A leader whose census is over (it takes results from now on). */
  async leader(node: FakeNode, within = 10_000): Promise<void> {
    const before = node.engine.redispatched;
    node.placement.promoted();
    await waitFor(() => node.engine.redispatched > before, within, `${node.name}'s census`);
  }

  /** What a run or census for node `name` is addressed to now: its process (wire.ts executorAddress). */
  addressOf(name: string): string {
    return executorAddress(name, this.said.get(name)?.executor?.().run);
  }

  /** Every node stops: timers cleared, subscriptions drained (the connections are closed by closeNatsClients). */
  async close(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.placement.close(0)));
  }

  private membersOf(self: string): Members {
    const others = (): Array<[string, Members]> => [...this.said].filter(([name, m]) => name !== self && m.executor !== null);
    return {
      executor: null,
      candidates: () => others().filter(([name]) => !this.lost.has(name)).map(([name, m]) => ({ name, executor: m.executor!() as ExecutorView })),
      executorNames: () => others().map(([name]) => name),
      lost: (name) => this.lost.has(name),
      runOf: (name) => this.said.get(name)?.executor?.().run,
    };
  }
}

/** An execution of `jobId` under a fresh attempt. */
export function execution(jobId: string): Execution {
  return { attempt: randomBytes(16).toString('hex'), jobId, execution: 1_700_000_000_000_000_000n, runner: { type: 'shell', command: 'true' }, rule: 'r1' };
}

/** What a runner reports of a finished attempt (without the node: the executor adds it). */
export function finished(status = 0): Attempt {
  return { rule: 'r1', runner: 'shell', startedNs: 1_700_000_000_100_000_000n, latenessNs: 100_000_000n, durationNs: 5_000_000n, outcome: { kind: 'exit', status, stderr: '' } };
}
