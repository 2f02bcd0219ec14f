// Row 1: pipelined SET/s in memory mode, 4 connections x 100 000 commands each, with 1 and
// with 2 connection workers (the issue: "measured: pipelined SET/s with 1 vs 2 workers").
// A 4 x 10 000 warm-up runs first on each daemon so that JIT and connection setup stay out of
// the measured window. The load generator runs on the same two cores as the daemon.
import { withDaemon } from '../lib/harness.ts';
import { loadSets } from '../lib/pipeline.ts';
import type { Figure, Row, RowOptions } from '../lib/suite.ts';

const CONNECTIONS = 4;
const COUNT = 100_000;

async function measure(workers: number, opts: RowOptions): Promise<Figure> {
  return withDaemon('pipelined', { workers, config: { database: { persistence: 'memory' } } }, async (daemon) => {
    await loadSets(daemon.tcp, CONNECTIONS, 10_000, 'warm');
    const r = await loadSets(daemon.tcp, CONNECTIONS, COUNT, 'run');
    opts.progress(`  ${workers} worker(s): ${Math.round(r.perSecond)} SET/s in ${r.seconds.toFixed(2)} s`);
    return {
      label: `pipelined SET/s, memory, ${CONNECTIONS} conn x ${COUNT.toLocaleString('en')}, ${workers} worker${workers > 1 ? 's' : ''}`,
      value: r.perSecond,
      unit: 'SET/s',
      target: { op: '>=', value: 200_000 },
    };
  });
}

export const row: Row = {
  name: 'pipelined',
  title: 'pipelined SET/s, memory mode, 4 connections x 100 000, with 1 and 2 workers',
  run: async (opts) => [await measure(1, opts), await measure(2, opts)],
};
