// Row 2: durable SET/s. Logfile mode with fsync_on_persist = true; 64 connections each in a
// closed loop (SET, wait for OK, next SET) for 5 s after a 1 s warm-up. An OK means the
// record is on disk, so the rate is bounded by fsyncs x records per fsync (group commit).
// Records per fsync: perf counts the daemon's fsync calls in the window (optional).
import { closedLoopSets } from '../lib/closed-loop.ts';
import { pidOf, sleep, withDaemon } from '../lib/harness.ts';
import { countFsyncs } from '../lib/perf.ts';
import type { Row } from '../lib/suite.ts';

const CONNECTIONS = 64;
const WARMUP_MS = 1000;
const WINDOW_MS = 5000;

export const row: Row = {
  name: 'durable',
  title: 'durable SET/s, logfile + fsync_on_persist, 64 closed-loop connections for 5 s',
  run: (opts) => withDaemon('durable', {
    workers: 1,
    config: { database: { persistence: 'logfile', fsync_on_persist: true, compression_interval: 0 } },
  }, async (daemon) => {
    const load = await closedLoopSets(daemon.tcp, CONNECTIONS, 'durable');
    let fsyncs: number | null = null;
    let records = 0;
    let seconds = 0;
    try {
      await sleep(WARMUP_MS);
      const counter = countFsyncs(pidOf(daemon));
      const replies0 = load.replies;
      const t0 = performance.now();
      await sleep(WINDOW_MS);
      // Taken just as perf is told to stop: replies and fsyncs cover (nearly) the same window.
      records = load.replies - replies0;
      seconds = (performance.now() - t0) / 1000;
      fsyncs = await counter.stop();
    } finally {
      await load.stop();
    }
    if (load.errors > 0) throw new Error(`${load.errors} SETs were answered ERROR`);
    const perSecond = records / seconds;
    const perFsync = fsyncs === null || fsyncs === 0 ? null : records / fsyncs;
    opts.progress(`  ${records} SETs in ${seconds.toFixed(2)} s; fsyncs counted: ${fsyncs ?? 'n/a'}`);
    return [
      {
        label: `durable SET/s, logfile + fsync, ${CONNECTIONS} closed-loop conn, ${WINDOW_MS / 1000} s`,
        value: perSecond,
        unit: 'SET/s',
        target: { op: '>=', value: 50_000 },
      },
      {
        label: 'records per fsync in that run (group commit)',
        value: perFsync,
        unit: 'records',
        digits: 1,
        note: perFsync === null
          ? 'perf could not count the fsync calls (perf missing or tracepoints not permitted)'
          : `${fsyncs} fsyncs in ${seconds.toFixed(2)} s (${Math.round(fsyncs! / seconds)}/s), counted by perf on the syscall tracepoints`,
      },
    ];
  }),
};
