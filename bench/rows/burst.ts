// Burst: 20 000 jobs due at the same instant T on an http POST rule to a sink in the bench
// process, in the configuration of the peer comparison (logfile with fsync, 2 workers); twice:
// the daemon's first burst (its firing and runner paths have run only in the start-up warm-ups;
// the connection to the sink is the one the lookahead opened about a second before T, and the
// primary and the runner child are awake at T: cluster/runner-standby.ts) and a
// second one 2-3 s later, warm. The figures are when the first POST reached the sink after T
// (how long marking and committing the burst holds back the first execution) and the
// completion rate from T to the last POST (bounded by the sink on this machine, ~11-13k/s).
// Jobs are loaded over 4 pipelining connections and T is the next whole second after loading
// has surely finished; the sink's clock and the daemon's are the same system wall clock.
import { wallMs, withDaemon } from '../lib/harness.ts';
import { command } from '../lib/command.ts';
import { loadSets } from '../lib/pipeline.ts';
import { HttpSink } from '../lib/sink.ts';
import type { Figure, Row } from '../lib/suite.ts';

const COUNT = 20_000;

export const row: Row = {
  name: 'burst',
  title: '20 000 jobs due at one instant (logfile + fsync, 2 workers, http POST to a local sink): first POST after T, completion rate',
  run: async (opts) => {
    const sink = await HttpSink.start();
    try {
      return await withDaemon('burst', { workers: 2, config: { database: { persistence: 'logfile', fsync_on_persist: true } } }, async (daemon) => {
        await command(daemon.tcp, `RULE SET burst burst. http POST ${sink.url}`);
        const figures: Figure[] = [];
        for (const round of ['first', 'second'] as const) {
          const before = sink.received;
          const dueMs = Math.ceil((Date.now() + 2000) / 1000) * 1000;
          const dueNs = BigInt(dueMs) * 1_000_000n;
          await loadSets(daemon.tcp, 4, COUNT / 4, `burst.${round}`, () => dueNs);
          const slackMs = dueMs - wallMs();
          opts.progress(`  ${round} burst: ${COUNT} jobs due at ${new Date(dueMs).toISOString()} (${Math.round(slackMs)} ms after loading)`);
          if (!(await sink.waitFor(before + COUNT, dueMs - Date.now() + 60_000))) throw new Error(`the sink saw ${sink.received - before} of ${COUNT} POSTs within 60 s`);
          const arrivals = sink.arrivals.slice(before).map((a) => a.arrivalMs);
          const first = Math.min(...arrivals) - dueMs;
          const last = Math.max(...arrivals) - dueMs;
          const what = round === 'first' ? 'the daemon\'s first burst (its firing and runner paths ran only in the start-up warm-ups; connection opened ahead and both processes awake at T by the lookahead)' : 'a second burst 2-3 s later (warm)';
          figures.push(
            {
              label: `burst of ${COUNT.toLocaleString('en')} due at T, ${round}: first POST at the sink after T`,
              value: first,
              unit: 'ms',
              digits: 1,
              target: { op: '<=', value: 5 },
              note: `${what}; loading ended ${Math.round(slackMs)} ms before T; malformed bodies ${sink.malformed}`,
            },
            {
              label: `burst of ${COUNT.toLocaleString('en')} due at T, ${round}: completion rate, T to the last POST`,
              value: COUNT / (last / 1000),
              unit: 'jobs/s',
              note: `last POST ${last.toFixed(0)} ms after T`,
            },
          );
        }
        return figures;
      });
    } finally {
      await sink.close();
    }
  },
};
