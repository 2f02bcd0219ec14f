// Row 8: compaction of a 1 000 000-record logfile (250 000 jobs SET 4 times, so it folds to a
// quarter) while jobs fire. The file is built through a daemon, which then restarts on it
// with compression_interval = 5 (fsync_on_persist on, the default): the first cycle, five
// seconds after "ready", folds the whole file. Probe jobs due every 2 ms on an http rule (as
// in the lateness row) fire from "ready" on, so the firing path is warm (JIT, the runner's
// connection) when the cycle starts. The figures are the cycle's wall time (from its
// "logfile compacted" log line) and the worst lateness of the probes due while it ran, from
// the daemon's own "job fired" debug lines (the sink's arrival times are in the note).
import type { Daemon } from '../../test/helpers/daemon.ts';
import { benchDir, mb, sleep, startDaemon, stopDaemon, wallNs } from '../lib/harness.ts';
import { buildLogfile, logTimeMs } from '../lib/logfile-load.ts';
import { firingsOf, probeRule, rollingProbes, type Firing } from '../lib/probes.ts';
import { spread } from '../lib/stats.ts';
import { latenessMs, HttpSink } from '../lib/sink.ts';
import type { Figure, Row, RowOptions } from '../lib/suite.ts';

const JOBS = 250_000;
const PASSES = 4;
const PATTERN = 'cprobe.';
/** The first cycle starts this long after "ready"; probes run from the start to warm up. */
const INTERVAL_S = 5;
/** Probes due this long before the cycle (and all after it) form the baseline beside it. */
const BASELINE_MS = 1500;

async function measure(daemon: Daemon, sink: HttpSink, opts: RowOptions): Promise<Figure[]> {
  await probeRule(daemon, PATTERN, sink);
  const probes = rollingProbes(daemon, PATTERN, 2, 300);
  let compacted: Record<string, unknown>;
  try {
    compacted = await daemon.waitForLog((r) => r['msg'] === 'logfile compacted', 120_000);
    await sleep(500); // probes after the cycle: the baseline beside it
  } finally {
    const { count, lastNs } = await probes.stop();
    const lastDueInMs = Number(lastNs / 1_000_000n) - Date.now();
    if (!(await sink.waitFor(count, Math.max(0, lastDueInMs) + 10_000))) opts.progress(`  only ${sink.received} of ${count} probes arrived`);
  }
  const cycleMs = Number(compacted['ms']);
  const endMs = logTimeMs(compacted);
  const startMs = endMs - cycleMs;
  const during: number[] = [];
  const outside: number[] = [];
  const arrivedDuring: number[] = [];
  const firings = firingsOf(daemon, PATTERN);
  for (const f of firings) {
    const dueMs = Number(f.executionNs / 1_000_000n);
    if (dueMs >= startMs && dueMs <= endMs) during.push(f.latenessMs);
    else if (dueMs >= startMs - BASELINE_MS) outside.push(f.latenessMs); // earlier ones warm up
  }
  for (const a of sink.arrivals) {
    const dueMs = Number(a.executionNs / 1_000_000n);
    if (dueMs >= startMs && dueMs <= endMs) arrivedDuring.push(latenessMs(a));
  }
  if (process.env['BENCH_TRACE'] === '1') traceWorst(firings, startMs, endMs, daemon, opts);
  const d = spread(during);
  const o = spread(outside);
  const e2e = spread(arrivedDuring);
  opts.progress(`  cycle ${cycleMs} ms; ${d.n} probes during it, worst ${d.max.toFixed(2)} ms (at the sink ${e2e.max.toFixed(2)} ms); ${o.n} outside, worst ${o.max.toFixed(2)} ms`);
  return [
    {
      label: `compaction of ${(JOBS * PASSES).toLocaleString('en')} records -> ${JOBS.toLocaleString('en')}: one cycle, wall`,
      value: cycleMs / 1000,
      unit: 's',
      digits: 2,
      note: `from the "logfile compacted" log line: ${compacted['inputRecords']} records (${mb(Number(compacted['inputBytes'])).toFixed(0)} MB) -> ${compacted['outputRecords']} (${mb(Number(compacted['outputBytes'])).toFixed(0)} MB); the fold runs in the compaction child (SCHED_IDLE, nice 19)`,
    },
    {
      label: 'worst firing lateness while compaction runs',
      value: d.n === 0 ? null : d.max,
      unit: 'ms',
      digits: 2,
      target: { op: '<=', value: 5 },
      note: d.n === 0
        ? 'no probe was due during the cycle'
        : `${d.n} probes due during the cycle: p50 ${d.p50.toFixed(2)}, p99 ${d.p99.toFixed(2)} ms; ${o.n} probes in the ${BASELINE_MS / 1000} s before and after it: p99 ${o.p99.toFixed(2)}, max ${o.max.toFixed(2)} ms. ` +
          `The daemon's "job fired" lines, as in the lateness row; at the http sink the worst was ${e2e.max.toFixed(2)} ms. fsync on`,
    },
  ];
}

/**
 * BENCH_TRACE=1: the five latest-firing probes of the cycle, and the cycle, in CLOCK_MONOTONIC
 * seconds (the clock of `perf record -k mono`), to find them in a scheduler trace of the run.
 */
function traceWorst(firings: Firing[], startMs: number, endMs: number, daemon: Daemon, opts: RowOptions): void {
  const monoMinusWallNs = process.hrtime.bigint() - wallNs();
  const mono = (wall: bigint): string => (Number(wall + monoMinusWallNs) / 1e9).toFixed(6);
  const inCycle = firings.filter((f) => { const ms = Number(f.executionNs / 1_000_000n); return ms >= startMs && ms <= endMs; });
  for (const f of inCycle.sort((a, b) => b.latenessMs - a.latenessMs).slice(0, 5)) {
    opts.progress(`  trace: ${f.latenessMs.toFixed(2)} ms late, due at mono ${mono(f.executionNs)}, primary pid ${daemon.proc.pid}`);
  }
  opts.progress(`  trace: cycle from mono ${mono(BigInt(startMs) * 1_000_000n)} to ${mono(BigInt(endMs) * 1_000_000n)}`);
}

export const row: Row = {
  name: 'compaction',
  title: 'compaction of a 1 000 000-record logfile: wall time, worst firing lateness meanwhile',
  run: async (opts) => {
    const dir = benchDir('compaction');
    try {
      await buildLogfile(dir.path, JOBS, PASSES, opts.progress);
      const sink = await HttpSink.start();
      try {
        const daemon = await startDaemon(dir.path, {
          workers: 1,
          config: { log: { level: 'debug' }, database: { persistence: 'logfile', fsync_on_persist: true, compression_interval: INTERVAL_S, framerate: 512 } },
        });
        try {
          return await measure(daemon, sink, opts);
        } finally {
          await stopDaemon(daemon);
        }
      } finally {
        await sink.close();
      }
    } finally {
      dir.remove();
    }
  },
};
