// Row: fire-http spread over a cluster (issue 40 item 4; tickd(8) CLUSTER MODE "Where jobs
// run"). On a 3-server NATS cluster of the bench's own, a 1-node cluster, then a 3-node one
// (another cluster name on the same servers), each with the default --max-inflight (256) and
// one runner process, as fire-http runs: 10 000 jobs all due at one instant T on an `http POST`
// rule to a sink in a process of its own (lib/sink-process.ts: its arrival times are not held
// up by the bench's loading). Before them, for scale, the same on a single memory-mode daemon
// (what fire-http measures, with this sink). Each run first fires a burst of 1 000, not
// measured, so that every node's http runner and the leader's way to each node have run once.
// Figures: T -> the sink's first arrival of the last job (the time to fire all) and the jobs/s
// it makes; the lateness the sink sees of each job's first arrival (arrival - the job's
// execution: the leader's tick, placing, the trip to the node, its runner's request); T ->
// STAT on the leader showing every one done (the results back at the leader and written to
// the stream); jobs that arrived twice (a leader that lost its lease mid-burst runs again what
// it had not recorded). Beside them: how the executions split across the nodes (each node's
// own GET /metrics tickd_jobs_executed_total), when a leader stepped down, the CPU each node's
// process tree and the NATS servers used from T to the last done, and the nodes' warnings.
import { loadavg } from 'node:os';
import { natsServerPath, startNats, type NatsCluster } from '../../test/helpers/nats.ts';
import { command } from '../lib/command.ts';
import { loggedAt } from '../lib/failover.ts';
import { cpuNow, cpuText, executedOn, followDone, loadBurst, nodeWarnings, notDone, startCluster, stopNodes, type PlacementCluster } from '../lib/placement-cluster.ts';
import { SinkProcess } from '../lib/sink-process.ts';
import { sleep, wallMs, withDaemon } from '../lib/harness.ts';
import { latenessMs, type Arrival } from '../lib/sink.ts';
import { spread, type Spread } from '../lib/stats.ts';
import type { Figure, Row, RowOptions } from '../lib/suite.ts';

const COUNT = 10_000;
const WARM_UP = 1_000;

interface Burst {
  readonly what: string;
  /** T -> the sink's first arrival of the last job to arrive, s. */
  readonly fireSeconds: number;
  readonly lateness: Spread;
  readonly note: string;
}

interface Ctx {
  readonly nats: NatsCluster;
  readonly sink: SinkProcess;
  readonly opts: RowOptions;
}

/**
 * `jobs` due at once under `prefix`, loaded through the leader; resolves once the sink has them
 * all and STAT on the leader shows `total` done (STAT counts every job held: the warm-up's
 * too), or 60 s after the sink had them all. The arrivals are collected only then, so that a
 * job run again meanwhile (a leader change) is counted.
 */
async function burst(ctx: Ctx, cl: PlacementCluster, what: string, prefix: string, jobs: number, total: number) {
  const { dueMs, slackMs, refused } = await loadBurst(cl.leader, prefix, jobs);
  if (refused !== '') ctx.opts.progress(`  ${what}: loaded again after ${refused}`);
  ctx.opts.progress(`  ${what}: ${jobs} jobs due at ${new Date(dueMs).toISOString()} (${Math.round(slackMs)} ms after loading)`);
  await ctx.sink.collect();
  const before = await ctx.sink.received();
  await sleep(dueMs - wallMs());
  const cpu = cpuNow(cl.nodes, ctx.nats);
  if (!await ctx.sink.waitFor(before + jobs, 120_000)) throw new Error(`the sink did not get ${jobs} requests in 120 s`);
  // A burst some of whose jobs the leader never records done is a finding, not a failed row.
  let doneMs: number | null = null;
  let stuck = '';
  try {
    doneMs = (await followDone(cl.leader, total, wallMs() + 60_000, ctx.opts.progress)).at(-1)![0];
  } catch (err) {
    stuck = `${(err as Error).message} (60 s after the sink had them all); ${await notDone(cl.leader, prefix)}`;
    ctx.opts.progress(`  ${stuck}`);
  }
  const cpuEnd = cpuNow(cl.nodes, ctx.nats);
  const { arrivals, malformed, stallMs } = await ctx.sink.collect();
  return { dueMs, slackMs, refused, arrivals: arrivals.filter((a) => a.jobId.startsWith(`${prefix}.`)), malformed, stallMs, doneMs, stuck, cpu, cpuEnd };
}

/** The warm-up, then the measured burst, on `cl` (its rules set here). */
async function measure(ctx: Ctx, cl: PlacementCluster, what: string): Promise<Burst> {
  await command(cl.leader.tcp, `RULE SET ph ph. http POST ${ctx.sink.url}`);
  await command(cl.leader.tcp, `RULE SET warm warm. http POST ${ctx.sink.url}`);
  await burst(ctx, cl, what, 'warm', WARM_UP, WARM_UP);
  const from = cl.nodes.map((d) => d.stderr.length);
  const base = await Promise.all(cl.nodes.map((d) => executedOn(d)));
  const b = await burst(ctx, cl, what, 'ph', COUNT, WARM_UP + COUNT);
  const split = (await Promise.all(cl.nodes.map((d) => executedOn(d)))).map((n, i) => n - base[i]!);
  const first = new Map<string, Arrival>();
  for (const a of b.arrivals) if (!first.has(a.jobId)) first.set(a.jobId, a);
  const firsts = [...first.values()];
  const fireSeconds = (Math.max(...firsts.map((a) => a.arrivalMs)) - b.dueMs) / 1000;
  const lateness = spread(firsts.map(latenessMs));
  const note = `${COUNT} jobs (after ${WARM_UP} not measured); ${(COUNT / fireSeconds).toFixed(0)} jobs/s to the sink; at the sink (first arrival of each) lateness p50 ${lateness.p50.toFixed(0)}, p99 ${lateness.p99.toFixed(0)}, max ${lateness.max.toFixed(0)} ms; ` +
    `${b.arrivals.length - firsts.length} arrived twice or more, ${COUNT - firsts.length} never${b.malformed > 0 ? `, ${b.malformed} malformed` : ''}; the sink's loop stalled up to ${b.stallMs.toFixed(0)} ms; ` +
    `${b.doneMs === null ? `NOT all done on the leader: ${b.stuck}` : `all done on the leader (STAT) ${((b.doneMs - b.dueMs) / 1000).toFixed(2)} s after T`}; ` +
    `${cl.nodes.length === 1 ? 'executions' : 'executions per node'} (GET /metrics${cl.nodes.length === 1 ? '' : ', n1 leads'}) ${split.join(' / ')}; ` +
    `${stepDowns(cl, from, b.dueMs)}${cpuText(b.cpu, b.cpuEnd)}; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}; loaded ${Math.round(b.slackMs)} ms before T${b.refused === '' ? '' : ` (loaded again after ${b.refused})`}; warnings and errors logged: ${nodeWarnings(cl.nodes, from)}`;
  ctx.opts.progress(`  ${what}: all fired in ${fireSeconds.toFixed(2)} s; ${note}`);
  cl.nodes.forEach((d, i) => {
    for (const line of d.stderr.slice(from[i])) if (/"level":[456]0\b/.test(line)) ctx.opts.progress(`  n${i + 1}: ${line.slice(0, 600)}`);
  });
  return { what, fireSeconds, lateness, note };
}

/** When a node that led stepped down during the burst, in s after T ('' if none did). */
function stepDowns(cl: PlacementCluster, from: readonly number[], dueMs: number): string {
  const at = cl.nodes.flatMap((d, i) => {
    const t = loggedAt(d.stderr.slice(from[i]), '"msg":"role changed: follower');
    return t === null ? [] : [`n${i + 1} at T${t >= dueMs ? '+' : ''}${((t - dueMs) / 1000).toFixed(1)} s`];
  });
  return at.length === 0 ? '' : `a leader stepped down: ${at.join(', ')}; `;
}

async function onCluster(ctx: Ctx, count: number): Promise<Burst> {
  const cl = await startCluster(ctx.nats, `benchph${count}`, count, []);
  try {
    return await measure(ctx, cl, count === 1 ? '1 node' : `${count} nodes`);
  } catch (err) {
    // What the nodes logged says more than a refused SET or a timeout does.
    throw new Error(`${(err as Error).message}; ${count} node(s) logged: ${nodeWarnings(cl.nodes)}`, { cause: err });
  } finally {
    await stopNodes(cl.nodes);
  }
}

async function run(opts: RowOptions): Promise<Figure[]> {
  const bin = natsServerPath();
  if (bin === null) return [{ label: 'placement http', value: null, unit: '', note: 'nats-server is missing' }];
  const sink = await SinkProcess.start();
  let nats: NatsCluster | null = null;
  try {
    nats = await startNats(bin, 3);
    const ctx = { nats, sink, opts };
    const alone = await withDaemon('placement-http', { config: { database: { persistence: 'memory' }, http: { listen: '127.0.0.1:0' } } },
      (d) => measure(ctx, { nodes: [d], leader: d }, 'single node, memory mode'));
    const one = await onCluster(ctx, 1);
    const three = await onCluster(ctx, 3);
    const figures = (b: Burst, note: string): Figure[] => [
      { label: `time to fire ${COUNT.toLocaleString('en')} http jobs due at once, ${b.what} (T -> last arrival at the sink)`, value: b.fireSeconds, unit: 's', digits: 2, note: `${note}${b.note}` },
      { label: `  lateness at the sink p99, ${b.what}`, value: b.lateness.p99, unit: 'ms' },
    ];
    return [
      ...figures(one, '1-node cluster on the 3-server NATS (R3 stream); '),
      ...figures(three, ''),
      { label: '  time to fire all, 3 nodes / 1 node', value: three.fireSeconds / one.fireSeconds, unit: 'x', digits: 2, note: 'below 1: three nodes fire the burst sooner' },
      ...figures(alone, 'not cluster mode: what fire-http measures, on the same sink process, for scale; NATS servers idle; '),
    ];
  } finally {
    await nats?.stop();
    await sink.close();
  }
}

export const row: Row = {
  name: 'placement-http',
  title: 'cluster placement: 10 000 http jobs due at once, fired by a 1-node vs a 3-node cluster',
  run,
};
