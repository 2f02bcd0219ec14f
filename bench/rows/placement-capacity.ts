// Row: the cluster's capacity is the sum of its nodes' (issue 40 item 4; tickd(8) CLUSTER MODE
// "Where jobs run"). On a 3-server NATS cluster of the bench's own, a 1-node cluster, then a
// 3-node one (another cluster name on the same servers: the stream costs the same in both),
// every node with --max-inflight 32 (one runner process, the default, as the single-node rows
// run). A backlog of 32 x 15 one-second jobs per node, all due in the same second, keeps every
// slot busy for about 15 s: the leader places them all at once, the fewest placed for its
// capacity first, and each node runs 32 at a time. The figure is the completion rate over the
// steady part: STAT on the leader every 100 ms (jobs_executed + jobs_failed, one request a
// tenth of a second: nothing beside the load), from the first sample showing 10 % of the jobs
// done to the first showing 90 %. The ideal is 32 a second per node, less what a spawn and a
// result's way back cost. The runner is `direct /bin/sleep 1`: one exec per job, where a shell
// rule execs /bin/sh, which parses the line and then execs sleep; what is measured is the slot
// count, not the runner. Beside it: per node, the executions it ran (its own GET /metrics),
// the CPU seconds of its process tree, the NATS servers' and the machine's share busy from the
// due time to the last done; and the nodes' warnings and errors.
import { loadavg } from 'node:os';
import type { Daemon } from '../../test/helpers/daemon.ts';
import { natsServerPath, startNats, type NatsCluster } from '../../test/helpers/nats.ts';
import { command } from '../lib/command.ts';
import { cpuNow, cpuText, executedOn, followDone, loadBurst, nodeWarnings, reachedAt, startCluster, stopNodes } from '../lib/placement-cluster.ts';
import { sleep, wallMs } from '../lib/harness.ts';
import type { Figure, Row, RowOptions } from '../lib/suite.ts';

const INFLIGHT = 32;
const BACKLOG_S = 15;
const RUNNER = 'direct /bin/sleep 1';

interface Capacity {
  readonly nodes: number;
  readonly jobs: number;
  /** Executions done per second from 10 % to 90 % done. */
  readonly rate: number;
  /** Due time -> the last done, s. */
  readonly allSeconds: number;
  readonly note: string;
}

async function measure(nats: NatsCluster, count: number, opts: RowOptions): Promise<Capacity> {
  const { nodes, leader } = await startCluster(nats, `benchcap${count}`, count, ['--max-inflight', String(INFLIGHT)]);
  try {
    const from = nodes.map((d) => d.stderr.length);
    await command(leader.tcp, `RULE SET cap cap. ${RUNNER}`);
    const jobs = INFLIGHT * BACKLOG_S * count;
    const { dueMs, slackMs, refused } = await loadBurst(leader, 'cap', jobs);
    opts.progress(`  ${count} node(s): ${jobs} jobs due at ${new Date(dueMs).toISOString()} (${Math.round(slackMs)} ms after loading)`);
    await sleep(dueMs - wallMs());
    const before = cpuNow(nodes, nats);
    const samples = await followDone(leader, jobs, dueMs + 120_000 + jobs * 100, opts.progress);
    const after = cpuNow(nodes, nats);
    const load = loadavg();
    const [t10, n10] = reachedAt(samples, jobs * 0.1)!;
    const [t90, n90] = reachedAt(samples, jobs * 0.9)!;
    const rate = (n90 - n10) / ((t90 - t10) / 1000);
    const allSeconds = (samples.at(-1)![0] - dueMs) / 1000;
    const split = await Promise.all(nodes.map((d: Daemon) => executedOn(d)));
    const note = `${jobs} jobs, all done ${allSeconds.toFixed(1)} s after due (ideal ${(jobs / (INFLIGHT * count)).toFixed(1)} s); ` +
      `${refused === '' ? '' : `loaded again after ${refused}; `}${(rate / (INFLIGHT * count) * 100).toFixed(0)} % of ${INFLIGHT * count}/s; executions per node (GET /metrics, n1 leads) ${split.join(' / ')}; ` +
      `${cpuText(before, after)}; load average ${load.map((l) => l.toFixed(1)).join(' ')}; nodes' warnings and errors: ${nodeWarnings(nodes, from)}`;
    opts.progress(`  ${count} node(s): ${rate.toFixed(1)} executions/s; ${note}`);
    return { nodes: count, jobs, rate, allSeconds, note };
  } finally {
    await stopNodes(nodes);
  }
}

async function run(opts: RowOptions): Promise<Figure[]> {
  const bin = natsServerPath();
  if (bin === null) return [{ label: 'placement capacity', value: null, unit: '', note: 'nats-server is missing' }];
  const nats = await startNats(bin, 3);
  try {
    const one = await measure(nats, 1, opts);
    const three = await measure(nats, 3, opts);
    const label = (c: Capacity): string => `completion rate, ${c.nodes} node${c.nodes === 1 ? '' : 's'} x --max-inflight ${INFLIGHT}, ${RUNNER}, 10-90 % done`;
    return [
      { label: label(one), value: one.rate, unit: 'exec/s', digits: 1, note: `1-node cluster on the 3-server NATS (R3 stream); ${one.note}` },
      { label: label(three), value: three.rate, unit: 'exec/s', digits: 1, note: three.note },
      { label: '  ratio 3 nodes / 1 node', value: three.rate / one.rate, unit: 'x', digits: 2, note: 'close to 3 when placement spreads the backlog by capacity' },
    ];
  } finally {
    await nats.stop();
  }
}

export const row: Row = {
  name: 'placement-capacity',
  title: 'cluster placement: completion rate of 1 s jobs, 1 node vs 3 nodes at --max-inflight 32 each',
  run,
};
