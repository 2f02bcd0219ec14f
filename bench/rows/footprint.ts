// Footprint: the default daemon on the sample configuration (etc/tickd.toml, its port made
// ephemeral and its logfile put in the row's directory; no --workers, so the default count):
// the time from spawn to "ready", then 5 s after "ready" with nothing stored the resident set
// of every process and their total (RSS, as `ps` shows it, and PSS, which counts the pages
// of the Node binary the processes share once: what the daemon costs the machine), and the
// same after 1 000 000 far-future jobs were SET (pipelined, 4 connections) and 2 s to settle.
// Then the idle figures once more with the HTTP interface on (the sample leaves it off),
// which loads the HTTP server in the worker and the metrics (GET /metrics) in the primary.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'smol-toml';
import type { Daemon } from '../../test/helpers/daemon.ts';
import { footprint, perProcess, total, type ProcessFootprint } from '../lib/footprint.ts';
import { benchDir, mb, pidOf, sleep, startDaemon, stopDaemon } from '../lib/harness.ts';
import { loadSets } from '../lib/pipeline.ts';
import type { Figure, Row, RowOptions } from '../lib/suite.ts';

const SAMPLE = fileURLToPath(new URL('../../etc/tickd.toml', import.meta.url));
const IDLE_MS = 5000;
const SETTLE_MS = 2000;
const JOBS = 1_000_000;

type Tree = Record<string, Record<string, unknown>>;

/** The sample configuration, its port ephemeral, its logfile in `dir`, with `http` when given. */
function sampleConfig(dir: string, http: Record<string, unknown> | null): Tree {
  const sample = parse(readFileSync(SAMPLE, 'utf8')) as Tree;
  return {
    ...sample,
    controller: { ...sample['controller'], listen: '127.0.0.1:0' },
    ...(http === null ? {} : { http }),
    database: { ...sample['database'], logfile_path: `${dir}/logfile` },
  };
}

/** Starts the default daemon on `config`, runs `body` with it and the spawn -> ready time, stops it. */
async function withSampleDaemon<T>(http: Record<string, unknown> | null, body: (daemon: Daemon, readyMs: number) => Promise<T>): Promise<T> {
  const bench = benchDir('footprint');
  try {
    const t0 = performance.now();
    const daemon = await startDaemon(bench.path, { workers: null, config: sampleConfig(bench.path, http) });
    const readyMs = performance.now() - t0;
    try {
      return await body(daemon, readyMs);
    } finally {
      await stopDaemon(daemon);
    }
  } finally {
    bench.remove();
  }
}

async function idle(daemon: Daemon, what: string, opts: RowOptions): Promise<ProcessFootprint[]> {
  await sleep(IDLE_MS);
  const fp = footprint(pidOf(daemon));
  opts.progress(`  ${what}, idle RSS: ${perProcess(fp, 'rss')} MB; PSS: ${perProcess(fp, 'pss')} MB`);
  return fp;
}

export const row: Row = {
  name: 'footprint',
  title: 'idle RSS per process and in all (sample configuration, default workers), and after 1 000 000 jobs; spawn to ready',
  run: async (opts) => {
    const figures: Figure[] = await withSampleDaemon(null, async (daemon, readyMs) => {
      const quiet = await idle(daemon, 'sample configuration', opts);
      await loadSets(daemon.tcp, 4, JOBS / 4, 'fp');
      await sleep(SETTLE_MS);
      const loaded = footprint(pidOf(daemon));
      opts.progress(`  with ${JOBS.toLocaleString('en')} jobs, RSS: ${perProcess(loaded, 'rss')} MB`);
      return [
        { label: 'spawn -> "ready"', value: readyMs, unit: 'ms', digits: 0 },
        { label: 'idle RSS, all processes (5 s after ready, nothing stored)', value: mb(total(quiet, 'rss')), unit: 'MB', digits: 0, target: { op: '<=', value: 200 }, note: `${perProcess(quiet, 'rss')} MB` },
        { label: '  idle PSS, all processes (shared pages counted once)', value: mb(total(quiet, 'pss')), unit: 'MB', digits: 0, note: `${perProcess(quiet, 'pss')} MB` },
        { label: `RSS, all processes, ${JOBS.toLocaleString('en')} jobs`, value: mb(total(loaded, 'rss')), unit: 'MB', digits: 0, note: `${perProcess(loaded, 'rss')} MB` },
      ];
    });
    const withHttp = await withSampleDaemon({ listen: '127.0.0.1:0' }, (daemon) => idle(daemon, 'with [http] listen', opts));
    figures.push({ label: '  idle RSS with the HTTP interface on', value: mb(total(withHttp, 'rss')), unit: 'MB', digits: 0, note: `${perProcess(withHttp, 'rss')} MB` });
    return figures;
  },
};
