// Row 5: firing lateness with 100 000 and then 1 000 000 pending (far-future) jobs, memory
// mode, framerate 512. The pending jobs are loaded with pipelined SETs; then 2 000 probe jobs
// are scheduled 2 ms apart, due from 1 s ahead, on an http rule whose sink (in this process)
// records arrival times. Lateness as the issue defines it (time of `triggered` vs execution)
// comes from the daemon's own `job fired` debug lines (log level debug here); the arrival at
// the sink - execution is printed beside it as an end-to-end upper bound (tick + dispatch +
// the HTTP request + the sink's event loop). Both clocks are the system wall clock read with
// sub-ms resolution (the daemon's wallNowNs, the sink's performance.timeOrigin + now()).
// The sink is a process of its own (sink-process.ts), as the target says: not the
// bench process, which generates the load.
// Before the first measured round, 300 probes warm up (JIT, the runner's keep-alive
// connection); after each load the daemon gets 1 s to settle.
import type { Daemon } from '../../test/helpers/daemon.ts';
import { sleep, withDaemon } from '../lib/harness.ts';
import { loadSets } from '../lib/pipeline.ts';
import { firingsOf, latenessOf, probeRule, scheduleProbes } from '../lib/probes.ts';
import { spread } from '../lib/stats.ts';
import { SinkProcess } from '../lib/sink-process.ts';
import type { Figure, Row, RowOptions } from '../lib/suite.ts';

const PROBES = 2000;
const LEAD_MS = 1000;
const SPACING_MS = 2;
const CONNECTIONS = 4;
const WARMUP_PROBES = 300;
const SETTLE_MS = 1000;

async function warmUp(daemon: Daemon, sink: SinkProcess): Promise<void> {
  await probeRule(daemon, 'warm.', sink);
  const before = await sink.received();
  await scheduleProbes(daemon, 'warm.', WARMUP_PROBES, 200, SPACING_MS);
  await sink.waitFor(before + WARMUP_PROBES, 200 + WARMUP_PROBES * SPACING_MS + 15_000);
  await sink.collect(); // the next collect has the round's arrivals only
}

async function probeRound(daemon: Daemon, sink: SinkProcess, pending: number, opts: RowOptions): Promise<Figure[]> {
  const pattern = `probe${pending}.`;
  await probeRule(daemon, pattern, sink);
  const before = await sink.received();
  await sink.collect(); // from here, the sink's stall and arrivals are this round's
  await scheduleProbes(daemon, pattern, PROBES, LEAD_MS, SPACING_MS);
  const allArrived = await sink.waitFor(before + PROBES, LEAD_MS + PROBES * SPACING_MS + 15_000);
  const round = await sink.collect();
  const sinkStallMs = round.stallMs;
  const fired = spread(firingsOf(daemon, pattern).map((f) => f.latenessMs));
  const arrived = spread(latenessOf(round.arrivals, pattern));
  opts.progress(`  ${pending} pending: ${fired.n} fired, p50 ${fired.p50.toFixed(2)} ms, p99 ${fired.p99.toFixed(2)} ms, max ${fired.max.toFixed(2)} ms; ` +
    `at the sink p99 ${arrived.p99.toFixed(2)} ms, max ${arrived.max.toFixed(2)} ms`);
  const size = pending.toLocaleString('en');
  const missing = allArrived ? '' : `; ${PROBES - arrived.n} probes never reached the sink`;
  const fig = (what: string, value: number): Figure => ({
    label: `firing lateness ${what}, ${size} pending, 512 Hz`,
    value,
    unit: 'ms',
    digits: 2,
  });
  return [
    fig('p50', fired.p50),
    {
      ...fig('p99', fired.p99),
      target: { op: '<=', value: 3 },
      note: `${fired.n} probes 2 ms apart; the daemon's "job fired" debug line: its tick's wall time - execution (a tick every 1.95 ms)`,
    },
    // Issue 22's targets: in the daemon, max 5 ms with 1 000 000 pending; at the sink (a
    // process apart from the daemon), max 8 ms with 100 000 pending.
    { ...fig('max', fired.max), ...(pending === 1_000_000 ? { target: { op: '<=', value: 5 } } : {}) },
    {
      label: `  same probes at the http sink, p99 (upper bound), ${size} pending`,
      value: arrived.p99,
      unit: 'ms',
      digits: 2,
      note: `Arrival at the sink - execution: tick + dispatch + HTTP POST + the sink's event loop, ` +
        `which itself stalled up to ${sinkStallMs.toFixed(1)} ms (a process apart from the bench's load)${missing}`,
    },
    {
      label: `  same probes at the http sink, max (upper bound), ${size} pending`,
      value: arrived.max,
      unit: 'ms',
      digits: 2,
      ...(pending === 100_000 ? { target: { op: '<=', value: 8 } } : {}),
    },
  ];
}

export const row: Row = {
  name: 'lateness',
  title: 'firing lateness p50/p99/max with 100 000 and 1 000 000 pending jobs, 512 Hz',
  run: (opts) => withDaemon('lateness', { workers: 1, config: { log: { level: 'debug' }, database: { persistence: 'memory', framerate: 512 } } }, async (daemon) => {
    const sink = await SinkProcess.start();
    try {
      await warmUp(daemon, sink);
      const figures: Figure[] = [];
      let pending = 0;
      for (const target of [100_000, 1_000_000]) {
        const add = target - pending;
        const r = await loadSets(daemon.tcp, CONNECTIONS, add / CONNECTIONS, `pend${target}`);
        pending = target;
        opts.progress(`  loaded ${add} pending jobs in ${r.seconds.toFixed(1)} s`);
        await sleep(SETTLE_MS);
        figures.push(...await probeRound(daemon, sink, pending, opts));
      }
      return figures;
    } finally {
      await sink.close();
    }
  }),
};
