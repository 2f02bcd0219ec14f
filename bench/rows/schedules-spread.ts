// Issue 37, item 11, the same 100 000 every-minute schedules as schedules-minute, with the
// spread its thundering-herd point asks for: `jitter=50s`, each occurrence due at its nominal
// time plus an offset derived from the schedule and that time (lib/schedule/occurrence.ts),
// so 2 000 a second instead of 100 000 at once. schedules-minute shows jitter 0: every
// occurrence due at the same instant, where the p99 is the time to fire 99 000 jobs, a
// throughput and not a lateness a spread or a faster tick could change.
//
// Here each occurrence's in-daemon lateness is measured exactly, as the lateness row measures
// jobs: the daemon's `job fired` debug lines (its tick's wall time - the job's execution),
// affordable at 2 000 a second. The primary's longest turn is its event loop's delay
// (bench/lib/loop-delay.cjs preloaded into the primary only, as the retries row does: per
// second, 1 ms resolution), from 11 s before the boundary (deciding ahead starts there) to the
// next boundary, with its longest garbage collection beside it. The tick loop's own turns over
// the same window are the daemon's histogram tickd.tick.turn_ms (bench/lib/tick-turns.ts): how
// many took over 10 ms, and the bucket of the longest. Exactly once: each occurrence job
// `<schedule>:<nominal>` reaches the sink once.
import { occurrenceId } from '../../lib/schedule/occurrence.ts';
import { sleep, wallMs, withDaemon } from '../lib/harness.ts';
import { firingsOf, probeRule, scheduleProbes } from '../lib/probes.ts';
import { loadSchedules } from '../lib/schedule-load.ts';
import { LoopDelays } from '../lib/loop-delays.ts';
import { readTurns, turnsBetween } from '../lib/tick-turns.ts';
import { ControlLoop } from '../lib/control-loop.ts';
import { SinkProcess } from '../lib/sink-process.ts';
import { spread } from '../lib/stats.ts';
import type { Row } from '../lib/suite.ts';

const CONNECTIONS = 4;
const PREFIX = 'sp';
const JITTER_S = 50;
const AFTER_LOAD_MS = 12_000;
const WINDOW_BEFORE_MS = 11_000;

export const row: Row = {
  name: 'schedules-spread',
  title: `100 000 every-minute schedules with jitter=${JITTER_S}s (--quick: 10 000): in-daemon lateness of each occurrence, the primary's longest turn`,
  sized: true,
  run: async (opts) => {
    const delays = new LoopDelays();
    const control = ControlLoop.start();
    // [http] for GET /metrics (the tick's turns), read twice.
    const config = { log: { level: 'debug' }, database: { persistence: 'memory', framerate: 512 }, http: { listen: '127.0.0.1:0' } };
    try {
      return await withDaemon('schedules-spread', { workers: 1, env: delays.env(), config }, async (daemon) => {
        const count = opts.full ? 100_000 : 10_000;
        const size = `${count.toLocaleString('en')} schedules${opts.full ? '' : ' (quick size)'}`;
        const sink = await SinkProcess.start();
        try {
          await probeRule(daemon, 'warm.', sink);
          await scheduleProbes(daemon, 'warm.', 300, 200, 2);
          await sink.waitFor(300, 15_000);
          await probeRule(daemon, `${PREFIX}.`, sink);
          const load = await loadSchedules(daemon.tcp, CONNECTIONS, count / CONNECTIONS, PREFIX, `every=1m jitter=${JITTER_S}s`);
          const nominalMs = Math.ceil((wallMs() + AFTER_LOAD_MS) / 60_000) * 60_000;
          opts.progress(`  loaded ${count} schedules in ${load.seconds.toFixed(1)} s; measuring the occurrences of ${new Date(nominalMs).toISOString()}`);
          const fromMs = nominalMs - WINDOW_BEFORE_MS;
          await sleep(fromMs - wallMs());
          const turnsBefore = await readTurns(daemon);
          const suffix = occurrenceId('', BigInt(nominalMs) * 1_000_000n);
          await sink.collect(); // from here, this boundary's arrivals
          const before = await sink.received();
          await sink.waitFor(before + count, JITTER_S * 1000 + 30_000 + WINDOW_BEFORE_MS);
          const untilMs = nominalMs + 60_000;
          await sleep(untilMs - wallMs());
          const ticks = turnsBetween(turnsBefore, await readTurns(daemon), 10);
          const arrivals = (await sink.collect()).arrivals.filter((a) => a.jobId.startsWith(`${PREFIX}.`) && a.jobId.endsWith(suffix));
          const seen = new Map<string, number>();
          for (const a of arrivals) seen.set(a.jobId, (seen.get(a.jobId) ?? 0) + 1);
          const once = [...seen.values()].filter((n) => n === 1).length;
          const fired = firingsOf(daemon, `${PREFIX}.`).filter((f) => f.jobId.endsWith(suffix));
          const late = spread(fired.map((f) => f.latenessMs));
          const { seconds: turns, gcs: collections } = delays.read(fromMs + 1000, untilMs);
          const turnMax = Math.max(...turns.map((t) => t.maxMs));
          const cpuMax = Math.max(...turns.map((t) => t.cpuMs));
          const controlMax = control.longestMs(fromMs + 1000, untilMs);
          const gcs = collections.map((g) => g.ms);
          // The seconds with a turn over 10 ms, from the boundary, each with the longest GC in it.
          const long = turns.filter((t) => t.maxMs > 10).map((t) => {
            const gc = Math.max(0, ...collections.filter((g) => g.atMs > t.atMs - 1000 && g.atMs <= t.atMs).map((g) => g.ms));
            return `${((t.atMs - nominalMs) / 1000).toFixed(0)} s: ${t.maxMs.toFixed(1)} ms (on a CPU ${t.gapCpuMs.toFixed(1)} of ${t.gapMs.toFixed(1)}; GC ${gc.toFixed(1)})`;
          });
          opts.progress(`  ${fired.length} fired, lateness p50 ${late.p50.toFixed(2)} p99 ${late.p99.toFixed(2)} max ${late.max.toFixed(2)} ms; tick turns over 10 ms ${ticks.over} of ${ticks.turns} (longest ${ticks.longest}); event loop's longest turn ${turnMax.toFixed(1)} ms, longest GC ${Math.max(0, ...gcs).toFixed(1)} ms, an idle process's longest delay ${controlMax.toFixed(1)} ms; ${once} reached the sink once`);
          return [
            {
              label: `schedule occurrence lateness p99 (in-daemon), ${size} every minute, jitter=${JITTER_S}s`,
              value: late.p99,
              unit: 'ms',
              digits: 2,
              target: { op: '<=', value: 5 },
              note: `${fired.length} occurrences of ${new Date(nominalMs).toISOString().slice(11, 16)} fired (the daemon's "job fired" debug lines: its tick's wall time - the job's execution, nominal + jitter); p50 ${late.p50.toFixed(2)} ms, max ${late.max.toFixed(2)} ms`,
            },
            {
              label: `  tick turns over 10 ms, from 11 s before the boundary to the next one`,
              value: ticks.over,
              unit: `of ${ticks.turns.toLocaleString('en')}`,
              target: { op: '<=', value: 0 },
              note: `the daemon's histogram tickd.tick.turn_ms (GET /metrics before and after): each event-loop turn of the tick loop, timed by the ticker, wall time (collections and waits for a CPU inside it included); the longest was ${ticks.longest}`,
            },
            {
              label: `  the primary's event loop: its longest turn of any kind, same window`,
              value: turnMax,
              unit: 'ms',
              digits: 1,
              target: { op: '<=', value: 10 },
              note: `event loop delay per second (perf_hooks, 1 ms resolution), ${turns.length} seconds; garbage collections of 3 ms or more: ${gcs.length}, the longest ${Math.max(0, ...gcs).toFixed(1)} ms; ` +
                `seconds with a turn over 10 ms (from the boundary), with the main thread's CPU time in the second's longest gap between two 1 ms probes: ${long.length === 0 ? 'none' : long.join(', ')}`,
            },
            {
              label: `  the primary's own work in one turn: its main thread's CPU time, at most`,
              value: cpuMax,
              unit: 'ms',
              digits: 1,
              note: 'bench/lib/loop-delay.cjs: the most CPU time the main thread used between two firings of a 1 ms timer (so at least its longest turn\'s own work, collections on the main thread included); what a turn took beyond that it waited for a CPU, or for V8\'s collector threads',
            },
            {
              label: `  an idle Node process beside it: its longest delay (the machine's own)`,
              value: controlMax,
              unit: 'ms',
              digits: 1,
              note: 'bench/lib/control-loop.ts, over the same seconds: no turn of the primary can be shorter than what the machine makes a process wait for a CPU',
            },
            {
              label: `  occurrences that reached the sink exactly once`,
              value: once,
              unit: `of ${count.toLocaleString('en')}`,
              note: `${seen.size} distinct occurrence jobs arrived, ${seen.size - once} more than once`,
            },
          ];
        } finally {
          await sink.close();
        }
      });
    } finally {
      delays.remove();
      control.stop();
    }
  },
};
