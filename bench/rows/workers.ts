// Workers: what the connection worker count buys on this machine, the measurement behind the
// default (tickd(8) --workers). For 1, 2, 4 and 8 workers: pipelined SET/s (memory mode, 4
// connections x 100 000 after a 4 x 10 000 warm-up, as row `pipelined`) with the primary's
// CPU share meanwhile (its user + system time over the wall time: 100 % is one core, the
// primary's one thread being what every worker feeds) and the workers' (all of them, in
// CPU microseconds per SET: how many workers it takes to keep the primary's thread busy), and
// durable SET/s (logfile + fsync, 4 connections x 256 in flight, as row `enqueue`).
import { readFileSync } from 'node:fs';
import { childrenRunning } from '../../test/helpers/procfs.ts';
import { pidOf, withDaemon } from '../lib/harness.ts';
import { loadSets } from '../lib/pipeline.ts';
import type { Figure, Row, RowOptions } from '../lib/suite.ts';
import { closedLoop } from './durable.ts';

const COUNTS = [1, 2, 4, 8];
const CONNECTIONS = 4;
const COUNT = 100_000;
const DEPTH = 256;

/** CPU seconds (user + system) of `pid` so far, from /proc/<pid>/stat (clock ticks of 10 ms). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime: fields 14 and 15
}

async function pipelined(workers: number, opts: RowOptions): Promise<Figure[]> {
  return withDaemon('workers', { workers, config: { database: { persistence: 'memory' } } }, async (daemon) => {
    await loadSets(daemon.tcp, CONNECTIONS, 10_000, 'warm');
    const pid = pidOf(daemon);
    const workerPids = childrenRunning(pid, 'cluster/worker.');
    const workerCpu = (): number => workerPids.reduce((sum, w) => sum + cpuSeconds(w), 0);
    const cpu0 = cpuSeconds(pid);
    const w0 = workerCpu();
    const r = await loadSets(daemon.tcp, CONNECTIONS, COUNT, 'run');
    const share = (cpuSeconds(pid) - cpu0) / r.seconds;
    const perSetUs = (cpu: number): number => (1e6 * cpu) / COUNT / CONNECTIONS;
    const primaryUs = perSetUs(share * r.seconds);
    const workersUs = perSetUs(workerCpu() - w0);
    opts.progress(`  ${workers} worker(s): ${Math.round(r.perSecond)} pipelined SET/s, primary ${(100 * share).toFixed(0)} % of a core; CPU per SET: primary ${primaryUs.toFixed(2)} us, workers ${workersUs.toFixed(2)} us`);
    return [
      { label: `pipelined SET/s, memory, ${workers} worker${workers > 1 ? 's' : ''}`, value: r.perSecond, unit: 'SET/s' },
      { label: '  primary CPU meanwhile', value: 100 * share, unit: '% core', digits: 0 },
      { label: '  CPU per SET: primary / workers', value: primaryUs, unit: 'us', digits: 2, note: `workers ${workersUs.toFixed(2)} us` },
    ];
  });
}

export const row: Row = {
  name: 'workers',
  title: 'pipelined and durable SET/s with 1, 2, 4 and 8 connection workers, and the primary\'s CPU share',
  run: async (opts) => {
    const figures: Figure[] = [];
    for (const workers of COUNTS) {
      figures.push(...await pipelined(workers, opts));
      const durable = await closedLoop('workers-durable', 'logfile', DEPTH, [], { connections: CONNECTIONS, workers });
      opts.progress(`  ${workers} worker(s): ${Math.round(durable.perSecond)} durable SET/s`);
      figures.push({ label: `durable SET/s, logfile + fsync, ${workers} worker${workers > 1 ? 's' : ''}, ${CONNECTIONS} conn x ${DEPTH}`, value: durable.perSecond, unit: 'SET/s' });
    }
    return figures;
  },
};
