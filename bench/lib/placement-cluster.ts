// What the placement rows (rows/placement-*.ts) share: a cluster of N tickd nodes on the bench's
// own NATS servers, every node live as an executor before a row loads a job; a burst loaded
// through the leader and followed by STAT; and where the CPU went meanwhile. The rows compare
// a 1-node cluster with a 3-node one on the same NATS servers, so what the stream costs is in
// both figures and the ratio is what placement adds.
import { readdirSync, readFileSync } from 'node:fs';
import { Kvm } from '@nats-io/kv';
import { LineClient, stat } from '../../test/helpers/client.ts';
import { startNode, waitForLeader } from '../../test/helpers/cluster-nodes.ts';
import type { Daemon } from '../../test/helpers/daemon.ts';
import { connectNats, type NatsCluster } from '../../test/helpers/nats.ts';
import { describeCounts, queryJobStates, warnings } from './failover.ts';
import { deathOf, httpOf, pidOf, sleep, stopDaemon, wallMs } from './harness.ts';
import { pipelinedSets } from './pipeline.ts';

export interface PlacementCluster {
  readonly nodes: Daemon[];
  readonly leader: Daemon;
}


/**
 * `count` nodes named `<name>-n1`... with `extra` flags; n1 is started alone first so that it
 * leads (the leader is then the same node in every run). Resolves once every node's entry in
 * the bucket `<name>-nodes` says what it runs (its `place`): before that, the leader would place
 * on fewer nodes. Read from the bucket, not GET /cluster, whose JSON leaves `executor` out.
 */
export async function startCluster(nats: NatsCluster, name: string, count: number, extra: readonly string[]): Promise<PlacementCluster> {
  const start = (i: number): Promise<Daemon> => startNode(nats, { cluster: name, name: `${name}-n${i}`, extra });
  const nodes = [await start(1)];
  const nc = await connectNats(nats.urls);
  try {
    const leader = await waitForLeader(nodes);
    nodes.push(...await Promise.all(Array.from({ length: count - 1 }, (_, i) => start(i + 2))));
    const kv = await new Kvm(nc).open(`${name}-nodes`);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const said = await Promise.all(nodes.map(async (_, i) => (await kv.get(`${name}-n${i + 1}`))?.json<{ place?: string }>().place !== undefined));
      if (said.every((s) => s)) break;
      if (Date.now() > deadline) throw new Error(`after 30 s, ${said.filter((s) => s).length} of ${count} nodes said what they run in ${name}-nodes`);
      await sleep(100);
    }
    await sleep(500); // the leader's watch of the bucket hears the last of them
    return { nodes, leader };
  } catch (err) {
    await stopNodes(nodes);
    throw err;
  } finally {
    await nc.close();
  }
}

export async function stopNodes(nodes: readonly Daemon[]): Promise<void> {
  await Promise.all(nodes.map((d) => stopDaemon(d, 10_000)));
}

/**
 * `jobs` SETs `<prefix>.<c>.<i>` through the leader, all due at the next whole second at least
 * 2 s away; T in wall ms. A load some SETs of which were refused (ERROR internal while the lease
 * changes hands) is sent again whole, with a new T, up to twice: `refused` says what happened.
 */
export async function loadBurst(leader: Daemon, prefix: string, jobs: number): Promise<{ dueMs: number; slackMs: number; refused: string }> {
  const refused: string[] = [];
  for (;;) {
    const dueMs = Math.ceil((Date.now() + 2000 + jobs / 5) / 1000) * 1000; // the stream takes >5 000 SET/s here
    const dueNs = BigInt(dueMs) * 1_000_000n;
    const loaded = await pipelinedSets(leader.tcp, 4, jobs / 4, prefix, () => dueNs);
    if (loaded.errors === 0) return { dueMs, slackMs: dueMs - wallMs(), refused: refused.join('; ') };
    // Which ERROR, from one more SET of a job of this burst.
    const client = await LineClient.connect(leader.tcp);
    const reply = await client.request('s', `SET ${prefix}.0.0 ${dueNs}`, 30_000).finally(() => client.close());
    refused.push(`${loaded.errors} of ${jobs} SETs answered ERROR (one more SET: ${reply.join(' / ')})`);
    if (refused.length === 3) throw new Error(`loading failed 3 times: ${refused.join('; ')}`);
    await sleep(3000);
  }
}

/** STAT `jobs_executed + jobs_failed` on the leader every 100 ms from now until it reaches `n`: [wall ms, done]. */
export async function followDone(leader: Daemon, n: number, deadlineMs: number, progress: (line: string) => void): Promise<Array<[number, number]>> {
  const client = await LineClient.connect(leader.tcp);
  const samples: Array<[number, number]> = [];
  let reported = Date.now();
  try {
    for (;;) {
      const s = await stat(client, 'st', 60_000);
      const done = Number(s.get('jobs_executed')) + Number(s.get('jobs_failed'));
      samples.push([wallMs(), done]);
      if (done >= n) return samples;
      if (wallMs() > deadlineMs) throw new Error(`only ${done} of ${n} jobs done by the deadline`);
      if (Date.now() - reported > 5000) {
        reported = Date.now();
        progress(`  ${done} of ${n} done`);
      }
      await sleep(100);
    }
  } catch (err) {
    await sleep(200);
    const death = deathOf(leader);
    throw death === null ? err : new Error(death, { cause: err });
  } finally {
    client.close();
  }
}

/**
 * Why jobs under `prefix` are not done: their statuses as a QUERY through the leader shows them
 * (count by status), and the first such job as GET /jobs/{id} shows it.
 */
export async function notDone(leader: Daemon, prefix: string): Promise<string> {
  const states = await queryJobStates(leader.tcp, `${prefix}.`);
  const counts = new Map<string, number>();
  let first: string | null = null;
  for (const [id, status] of states) {
    if (status === 'executed' || status === 'failed') continue;
    counts.set(status, (counts.get(status) ?? 0) + 1);
    first ??= id;
  }
  if (first === null) return 'every job is done now';
  return `not done: ${describeCounts(counts)}; GET /jobs/${first}: ${(await (await httpOf(leader, `/jobs/${first}`)).text()).slice(0, 400)}`;
}

/** When `samples` first showed at least `n` done (wall ms), or null. */
export function reachedAt(samples: ReadonlyArray<[number, number]>, n: number): [number, number] | null {
  return samples.find(([, done]) => done >= n) ?? null;
}

/** Executions this node ran (both outcomes), from its own GET /metrics. */
export async function executedOn(d: Daemon): Promise<number> {
  const text = await (await httpOf(d, '/metrics')).text();
  let n = 0;
  for (const m of text.matchAll(/^tickd_jobs_executed_total\{[^}]*\} (\S+)$/gm)) n += Number(m[1]);
  return n;
}

/** User + system CPU seconds of a process (Linux /proc; clock ticks of 1/100 s); with `reaped`, its reaped children's too. */
function cpuOf(pid: number, reaped: boolean): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const own = Number(fields[11]) + Number(fields[12]);
  return (reaped ? own + Number(fields[13]) + Number(fields[14]) : own) / 100;
}

/**
 * CPU seconds of `pid` and everything under it still running, plus the children each of them
 * reaped (a runner's sleep or the like, gone by the next sample). A process that exits
 * between two samples drops out of the sum, so take both samples while the tree is whole.
 */
export function treeCpu(pid: number): number {
  let sum = 0;
  try {
    sum = cpuOf(pid, true);
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const children = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter((c) => c !== '');
      for (const c of children) sum += treeCpu(Number(c));
    }
  } catch { /* it exited meanwhile */ }
  return sum;
}

/** CPU the machine spent (all cores) and elapsed in all, in jiffies, from /proc/stat. */
export function machineCpu(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - f[3]! - f[4]!, total };
}

export interface CpuSample {
  readonly nodes: number[];
  readonly nats: number;
  readonly machine: { busy: number; total: number };
}

export function cpuNow(nodes: readonly Daemon[], nats: NatsCluster): CpuSample {
  return { nodes: nodes.map((d) => treeCpu(pidOf(d))), nats: nats.servers.reduce((a, s) => a + cpuOf(s.proc.pid!, false), 0), machine: machineCpu() };
}

/** Per node and NATS CPU seconds between two samples, and how busy the machine's cores were (share of all). */
export function cpuText(a: CpuSample, b: CpuSample): string {
  const busy = (b.machine.busy - a.machine.busy) / (b.machine.total - a.machine.total);
  return `CPU s: nodes ${b.nodes.map((c, i) => (c - a.nodes[i]!).toFixed(1)).join(' / ')}, NATS servers ${(b.nats - a.nats).toFixed(1)}; machine ${(busy * 100).toFixed(0)} % busy`;
}

/** The nodes' warnings and errors, by node (n1...) and message, from line `from[i]` of node i's log on ('none' if none). */
export function nodeWarnings(nodes: readonly Daemon[], from: readonly number[] = []): string {
  const counts = new Map<string, number>();
  nodes.forEach((d, i) => {
    for (const [message, n] of warnings(d.stderr.slice(from[i] ?? 0))) counts.set(`n${i + 1}: ${message}`, n);
  });
  return counts.size === 0 ? 'none' : describeCounts(counts);
}
