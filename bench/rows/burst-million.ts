// A burst of 1 000 000 jobs due at one instant T with no rule matching them (memory mode, one
// worker): every one of them fails in the tick that fires it, so this is the tick's own work
// at that size (issue 22: "the tick must stay responsive to commands during a burst of
// 1 000 000 due jobs"), with no runner to wait for. A client sends STAT in a closed loop from
// just before T until every job has failed: the figures are the firing rate (T to the last) and
// STAT's round trip meanwhile. (The "job failed" warnings are about a hundred a second: the
// rest are counted, doc/execution.md.)
import { LineClient, stat } from '../../test/helpers/client.ts';
import { sleep, wallMs, withDaemon } from '../lib/harness.ts';
import { loadSets } from '../lib/pipeline.ts';
import { spread } from '../lib/stats.ts';
import type { Row } from '../lib/suite.ts';

const COUNT = 1_000_000;
const CONNECTIONS = 4;

export const row: Row = {
  name: 'burst-million',
  title: '1 000 000 jobs due at one instant, no rule (memory mode): firing rate, STAT round trip meanwhile',
  run: (opts) => withDaemon('burst-million', { workers: 1, config: { database: { persistence: 'memory' } } }, async (daemon) => {
    // Loading runs at 300 000+ SET/s here; 4 s leaves room on a loaded machine.
    const dueMs = Math.ceil((Date.now() + 4000) / 1000) * 1000;
    await loadSets(daemon.tcp, CONNECTIONS, COUNT / CONNECTIONS, 'burst', () => BigInt(dueMs) * 1_000_000n);
    const slackMs = dueMs - wallMs();
    opts.progress(`  ${COUNT} jobs due at ${new Date(dueMs).toISOString()} (${Math.round(slackMs)} ms after loading)`);
    // Loading past T would count its own time in the rate and fire while SETs still arrive.
    if (slackMs < 200) throw new Error(`loading ended ${Math.round(-slackMs)} ms after T - 200 ms: the machine is too busy for this row now`);
    const client = await LineClient.connect(daemon.tcp);
    try {
      while (wallMs() < dueMs - 100) await sleep(20);
      const roundTrips: number[] = [];
      let failed = 0;
      let doneMs = 0;
      const deadline = dueMs + 120_000;
      while (failed < COUNT) {
        const asked = wallMs();
        const s = await stat(client, 'st', 120_000);
        const now = wallMs();
        roundTrips.push(now - asked);
        failed = Number(s.get('jobs_failed'));
        doneMs = now;
        if (now > deadline) throw new Error(`only ${failed} of ${COUNT} jobs fired within 120 s of T`);
      }
      const rt = spread(roundTrips);
      const seconds = (doneMs - dueMs) / 1000;
      return [
        { label: `1,000,000 due at once, no rule: fired per second, T to the last`, value: COUNT / seconds, unit: 'jobs/s', note: `the last failed ${seconds.toFixed(2)} s after T (known to one STAT round trip)` },
        { label: `  STAT round trip during that burst, p99`, value: rt.p99, unit: 'ms', digits: 1, note: `${rt.n} STATs in a closed loop, p50 ${rt.p50.toFixed(1)} ms` },
        { label: `  STAT round trip during that burst, max`, value: rt.max, unit: 'ms', digits: 1 },
      ];
    } finally {
      client.close();
    }
  }),
};
