// Retries under load (issue 38, "no cost when unused" and the tick's worst turn): 20 000 jobs
// due 0.5 ms apart (2 000 a second for 10 s) on an http rule whose sink fails every other
// request (500), once without a retry policy and once with 3 attempts a second apart (every
// failure persisted as a wait, then run again). The primary's longest turn is read from its
// event loop's delay (lib/loop-delay.cjs, preloaded: perf_hooks at 1 ms resolution, per
// second, from the first job due to the last done); STAT is asked every 10 ms meanwhile, its
// round trip (client -> worker -> primary -> worker -> client) what a client sees. The tick
// loop's own turns over the same run are the daemon's histogram tickd.tick.turn_ms
// (bench/lib/tick-turns.ts), read from GET /metrics once the jobs are loaded and once they are
// done. Memory mode, as the other fire rows.
import { LineClient, stat } from '../../test/helpers/client.ts';
import { sleep, wallMs, withDaemon } from '../lib/harness.ts';
import { loadSets } from '../lib/pipeline.ts';
import { command } from '../lib/command.ts';
import { LoopDelays } from '../lib/loop-delays.ts';
import { readTurns, turnsBetween, type TurnWindow } from '../lib/tick-turns.ts';
import { ControlLoop } from '../lib/control-loop.ts';
import { HttpSink } from '../lib/sink.ts';
import type { Figure, Row } from '../lib/suite.ts';

const COUNT = 20_000;
const CONNECTIONS = 4;
const SPACING_NS = 500_000n;
const POLL_MS = 10;


interface Run { readonly ticks: TurnWindow; readonly turnMaxMs: number; readonly cpuMaxMs: number; readonly controlMaxMs: number; readonly gcMaxMs: number; readonly seconds: number; readonly executed: number; readonly failed: number; readonly statMaxMs: number; readonly statP99Ms: number; readonly requests: number }

async function run(options: string): Promise<Run> {
  const delays = new LoopDelays();
  const control = ControlLoop.start();
  const sink = await HttpSink.start();
  sink.statusOf = (n) => (n % 2 === 0 ? 500 : 204);
  try {
    return await withDaemon('retries', { env: delays.env(), config: { database: { persistence: 'memory' }, http: { listen: '127.0.0.1:0' } } }, async (daemon) => {
      await command(daemon.tcp, `RULE SET r r. ${options}http POST ${sink.url}`);
      const dueMs = Math.ceil((Date.now() + 2000) / 1000) * 1000;
      const per = COUNT / CONNECTIONS;
      await loadSets(daemon.tcp, CONNECTIONS, per, 'r', (c, i) => BigInt(dueMs) * 1_000_000n + BigInt(i * CONNECTIONS + c) * SPACING_NS);
      const turnsBefore = await readTurns(daemon);
      const client = await LineClient.connect(daemon.tcp);
      const trips: number[] = [];
      try {
        for (;;) {
          const asked = wallMs();
          const s = await stat(client, 'st', 60_000);
          const now = wallMs();
          if (now > dueMs) trips.push(now - asked);
          const executed = Number(s.get('jobs_executed'));
          const failed = Number(s.get('jobs_failed'));
          if (executed + failed >= COUNT) {
            trips.sort((a, b) => a - b);
            // The seconds from the first job due to the last done (each line closes a second).
            const seconds = delays.read(dueMs + 1000, now + 1000).seconds;
            const turns = seconds.map((t) => t.maxMs);
            const gcs = delays.read(dueMs, now).gcs.map((g) => g.ms);
            const ticks = turnsBetween(turnsBefore, await readTurns(daemon), 10);
            return { ticks, turnMaxMs: Math.max(...turns), cpuMaxMs: Math.max(...seconds.map((t) => t.cpuMs)), controlMaxMs: control.longestMs(dueMs + 1000, now + 1000), gcMaxMs: Math.max(0, ...gcs), seconds: (now - dueMs) / 1000, executed, failed, statMaxMs: trips.at(-1) ?? 0, statP99Ms: trips[Math.floor(trips.length * 0.99)] ?? 0, requests: sink.received };
          }
          if (now > dueMs + 120_000) throw new Error(`only ${executed + failed} of ${COUNT} jobs done after 120 s`);
          await sleep(POLL_MS);
        }
      } finally {
        client.close();
      }
    });
  } finally {
    await sink.close();
    delays.remove();
    control.stop();
  }
}

const describe = (r: Run): string =>
  `tick turns over 10 ms ${r.ticks.over} of ${r.ticks.turns} (tickd.tick.turn_ms; the longest ${r.ticks.longest}); primary's longest turn (event loop delay, 1 ms resolution) ${r.turnMaxMs.toFixed(1)} ms, its own work in one turn at most (main-thread CPU time between two 1 ms probes) ${r.cpuMaxMs.toFixed(1)} ms, its longest garbage collection ${r.gcMaxMs.toFixed(1)} ms; an idle Node process's longest delay meanwhile (the machine's own: bench/lib/control-loop.ts) ${r.controlMaxMs.toFixed(1)} ms; ${r.executed} executed, ${r.failed} failed, ${r.requests} requests in ${r.seconds.toFixed(1)} s; STAT round trip p99 ${r.statP99Ms.toFixed(1)} ms, max ${r.statMaxMs.toFixed(1)} ms`;

export const row: Row = {
  name: 'retries',
  title: 'retries: 20 000 jobs over 10 s against a sink failing every other request, without and with 3 attempts',
  run: async (opts) => {
    const none = await run('');
    opts.progress(`  without a policy: ${describe(none)}`);
    const retried = await run('retry.attempts=3 retry.backoff=fixed retry.delay=1s ');
    opts.progress(`  with 3 attempts: ${describe(retried)}`);
    const figures: Figure[] = [
      { label: 'tick turns over 10 ms, with 3 attempts a second apart', value: retried.ticks.over, unit: `of ${retried.ticks.turns.toLocaleString('en')}`, target: { op: '<=', value: 0 }, note: `the daemon's histogram tickd.tick.turn_ms: each event-loop turn of the tick loop, wall time; the longest ${retried.ticks.longest} (without a policy: ${none.ticks.over} of ${none.ticks.turns} over 10 ms, the longest ${none.ticks.longest})` },
      { label: 'primary\'s longest turn, without a retry policy (half the requests fail)', value: none.turnMaxMs, unit: 'ms', digits: 1, note: describe(none) },
      { label: 'primary\'s longest turn, with 3 attempts a second apart (every failure a persisted wait)', value: retried.turnMaxMs, unit: 'ms', digits: 1, target: { op: '<=', value: 10 }, note: describe(retried) },
      { label: '  its own work in one turn: its main thread\'s CPU time, at most', value: retried.cpuMaxMs, unit: 'ms', digits: 1, note: 'bench/lib/loop-delay.cjs: the most CPU time the main thread used between two firings of a 1 ms timer (at least its longest turn\'s own work, collections on the main thread included)' },
      { label: '  an idle Node process beside it: its longest delay (the machine\'s own)', value: retried.controlMaxMs, unit: 'ms', digits: 1, note: 'bench/lib/control-loop.ts: no turn of the primary can be shorter than what the machine makes a process wait for a CPU' },
    ];
    return figures;
  },
};
