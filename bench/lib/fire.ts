// Fire rate: `count` jobs all due at one instant T (the next whole second after loading has
// surely finished) on one rule; the figure is count / (time from T until STAT says they have
// all run). STAT is polled every 100 ms, so the end is known to 100 ms: at 5 000 jobs and a
// few hundred jobs/s that is a few percent. Memory mode: this measures the scheduler and the
// runner pool, not the logfile. The slowest STAT round trip is kept too: while the primary
// is busy starting executions, its answers to clients may wait, and that is worth seeing.
import { LineClient, stat } from '../../test/helpers/client.ts';
import { deathOf, sleep, wallMs, withDaemon } from './harness.ts';
import { loadSets } from './pipeline.ts';
import { command } from './command.ts';

export interface FireResult {
  readonly jobsPerSecond: number;
  readonly seconds: number;
  readonly executed: number;
  readonly failed: number;
  /** Loading finished this many ms before T (negative: after, and the figure is pessimistic). */
  readonly slackMs: number;
  /** The slowest STAT round trip while the jobs ran: how responsive the daemon stayed. */
  readonly worstStatMs: number;
}

const POLL_MS = 100;

/** STAT as a map; a long timeout, as a daemon busy spawning may answer late (and that is data). */
export async function fireRate(row: string, count: number, runnerTokens: string, progress: (line: string) => void): Promise<FireResult> {
  return withDaemon(row, { config: { database: { persistence: 'memory' } } }, async (daemon) => {
    await command(daemon.tcp, `RULE SET fire fire. ${runnerTokens}`);
    // Loading runs at >100 000 SET/s; 1 s per 50 000 jobs plus a second of margin.
    const dueMs = Math.ceil((Date.now() + 1000 + (count / 50_000) * 1000) / 1000) * 1000;
    const dueNs = BigInt(dueMs) * 1_000_000n;
    await loadSets(daemon.tcp, 4, Math.ceil(count / 4), 'fire', () => dueNs);
    const loaded = Math.ceil(count / 4) * 4;
    const slackMs = dueMs - wallMs();
    progress(`  ${loaded} jobs due at ${new Date(dueMs).toISOString()} (${Math.round(slackMs)} ms after loading)`);
    const client = await LineClient.connect(daemon.tcp);
    try {
      // Generous bound: 20 jobs/s would be a broken daemon, not a slow one.
      const deadline = dueMs + 30_000 + (loaded / 20) * 1000;
      let lastReport = Date.now();
      let worstStatMs = 0;
      for (;;) {
        const asked = wallMs();
        const s = await stat(client, 'st', 300_000);
        const now = wallMs();
        if (now > dueMs) worstStatMs = Math.max(worstStatMs, now - asked);
        const executed = Number(s.get('jobs_executed'));
        const failed = Number(s.get('jobs_failed'));
        if (executed + failed >= loaded) {
          const seconds = (now - dueMs) / 1000;
          return { jobsPerSecond: loaded / seconds, seconds, executed, failed, slackMs, worstStatMs };
        }
        if (now > deadline) throw new Error(`only ${executed + failed} of ${loaded} jobs ran by ${((now - dueMs) / 1000).toFixed(0)} s after they were due`);
        if (Date.now() - lastReport > 5000) {
          lastReport = Date.now();
          progress(`  ${executed + failed} of ${loaded} run`);
        }
        await sleep(POLL_MS);
      }
    } catch (err) {
      // A dead daemon explains a closed connection better than the connection does.
      await sleep(200);
      const death = deathOf(daemon);
      throw death === null ? err : new Error(death, { cause: err });
    } finally {
      client.close();
    }
  });
}
