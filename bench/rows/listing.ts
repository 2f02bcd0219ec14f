// Row: listings cost a page, not the whole answer (lib/domain/page.ts). Memory mode, 1 worker,
// 1 000 000 far-future jobs. Phase 1: a client writes 1 000 `QUERY` lines in one write and
// never reads, while a second client runs STAT in a closed loop for PHASE_MS; the figures are
// the rise of the daemon's total RSS (primary + workers, the highest of samples every 50 ms
// against the level before) and the second client's STAT p99. Phase 2: that client is gone,
// and a reading client takes one QUERY of all 1 000 000 lines; the figure is the RSS rise
// while it streams, beside its time.
import { connect, type Socket } from 'node:net';
import { LineClient } from '../../test/helpers/client.ts';
import type { Address } from '../../test/helpers/daemon.ts';
import { treeRss } from '../../test/helpers/procfs.ts';
import { pidOf, sleep, withDaemon } from '../lib/harness.ts';
import { loadSets } from '../lib/pipeline.ts';
import { spread } from '../lib/stats.ts';
import type { Row } from '../lib/suite.ts';

const JOBS = 1_000_000;
const GREEDY_QUERIES = 1000;
const PHASE_MS = 5000;
const SETTLE_MS = 2000;
const MiB = 1024 * 1024;

/** Samples `sample()` every 50 ms until stopped; resolves with the highest value seen. */
function peakOf(sample: () => number): { stop(): number } {
  let peak = sample();
  const timer = setInterval(() => { peak = Math.max(peak, sample()); }, 50);
  return { stop: () => { clearInterval(timer); return Math.max(peak, sample()); } };
}

function open(addr: Address): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(addr.port, addr.host, () => resolve(s));
    s.once('error', reject);
  });
}

/** One QUERY on a fresh connection, reading as fast as it can: the lines it got before `q OK`. */
async function readWholeQuery(addr: Address): Promise<number> {
  const s = await open(addr);
  return new Promise((resolve, reject) => {
    let lines = 0;
    let tail = Buffer.alloc(0);
    s.on('data', (chunk: Buffer) => {
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
      tail = Buffer.concat([tail, chunk]).subarray(-8);
      if (tail.toString().endsWith('\nq OK\n')) { s.destroy(); resolve(lines - 1); }
    });
    s.on('error', reject);
    s.write('q QUERY\n');
  });
}

export const row: Row = {
  name: 'listing',
  title: 'listings under a client that does not read: RSS rise, STAT p99; one 1M-line QUERY',
  run: (opts) => withDaemon('listing', { workers: 1, config: { database: { persistence: 'memory' } } }, async (daemon) => {
    const jobs = JOBS;
    const pid = pidOf(daemon);
    await loadSets(daemon.tcp, 4, jobs / 4, 'list');
    await sleep(SETTLE_MS);

    const before = treeRss(pid);
    const greedy = await open(daemon.tcp);
    greedy.pause();
    greedy.write(Array.from({ length: GREEDY_QUERIES }, (_, i) => `q${i} QUERY\n`).join(''));
    const peak = peakOf(() => treeRss(pid));
    const other = await LineClient.connect(daemon.tcp);
    const statMs: number[] = [];
    const until = performance.now() + PHASE_MS;
    try {
      while (performance.now() < until) {
        const t0 = performance.now();
        const reply = await other.request('s', 'STAT', 10_000);
        if (reply.at(-1) !== 's OK') throw new Error(`STAT answered ${reply.join(' / ')}`);
        statMs.push(performance.now() - t0);
      }
    } finally {
      other.close();
    }
    const greedyRise = (peak.stop() - before) / MiB;
    greedy.destroy();
    const stat = spread(statMs);
    opts.progress(`  greedy: RSS ${(before / MiB).toFixed(0)} MiB + ${greedyRise.toFixed(1)} MiB; STAT n=${stat.n} p50 ${stat.p50.toFixed(2)} ms p99 ${stat.p99.toFixed(2)} ms max ${stat.max.toFixed(2)} ms`);

    await sleep(SETTLE_MS);
    const base = treeRss(pid);
    const streaming = peakOf(() => treeRss(pid));
    const t0 = performance.now();
    const lines = await readWholeQuery(daemon.tcp);
    const seconds = (performance.now() - t0) / 1000;
    const readRise = (streaming.stop() - base) / MiB;
    if (lines !== jobs) throw new Error(`QUERY gave ${lines} lines, expected ${jobs}`);
    opts.progress(`  reader: ${lines} lines in ${seconds.toFixed(2)} s; RSS ${(base / MiB).toFixed(0)} MiB + ${readRise.toFixed(1)} MiB`);

    const size = `${jobs.toLocaleString('en')} jobs`;
    return [
      { label: `RSS rise, ${GREEDY_QUERIES} QUERYs never read, ${size}`, value: greedyRise, unit: 'MiB', digits: 1, target: { op: '<=', value: 64 },
        note: `daemon (primary + 1 worker) ${(before / MiB).toFixed(0)} MiB before; highest sample over ${PHASE_MS / 1000} s` },
      { label: `STAT p99 meanwhile, other client, ${size}`, value: stat.p99, unit: 'ms', digits: 2, target: { op: '<=', value: 50 },
        note: `${stat.n} STATs, p50 ${stat.p50.toFixed(2)} ms, max ${stat.max.toFixed(2)} ms` },
      { label: `RSS rise, one QUERY read whole, ${size}`, value: readRise, unit: 'MiB', digits: 1, target: { op: '<=', value: 64 },
        note: `${lines.toLocaleString('en')} lines in ${seconds.toFixed(2)} s (${Math.round(lines / seconds).toLocaleString('en')} lines/s)` },
    ];
  }),
};
