// An every-second schedule across a `kill -9` of several seconds, under each missed-run policy
// (issue 37; tickd-protocol(7) SCHEDULES), through the real daemon and its logfile: every
// nominal time from the first to the last decided is either one occurrence job or inside one
// recorded skip, never both and never two jobs; what fell in the downtime follows the policy;
// each runner learns its schedule and nominal time; and no occurrence runs twice except the
// one a kill may catch running (at least once, as for any job).
import { expect } from 'chai';
import { join } from 'node:path';
import type { Daemon } from '../helpers/daemon.ts';
import { LineClient, waitFor } from '../helpers/client.ts';
import { tempDir } from '../helpers/tmp.ts';
import { linesOf, listLines, logfileDaemon, ok } from './logfile-helpers.ts';
import { parseOccurrenceId } from '../../lib/schedule/occurrence.ts';

const S = 1_000_000_000n;
const DOWN_MS = 4500;

interface Skip { from: bigint; to: bigint; count: number; reason: string }

async function skipsOf(c: LineClient, id: string): Promise<Skip[]> {
  const lines = await c.request('h', `SCHEDULE HISTORY ${id} 100`, 10000);
  expect(lines.pop()).to.equal('h OK');
  return lines.filter((l) => l.includes(' skipped ')).map((l) => {
    const m = /^h (\d+) skipped - reason=(\w+) from=(\d+) count=(\d+)$/.exec(l);
    if (m === null) throw new Error(`history line ${l}`);
    return { to: BigInt(m[1]!), reason: m[2]!, from: BigInt(m[3]!), count: Number(m[4]) };
  });
}

for (const missed of ['skip', 'once', 'all'] as const) {
  describe(`an every-second schedule across kill -9 (missed=${missed})`, function () {
    this.timeout(60000);
    const dir = tempDir();
    const out = join(dir, 'runs.out');
    const id = `e.${missed}`;
    let daemon: Daemon | undefined;
    after(async () => { await daemon?.kill(); });

    it('decides each nominal time once: a job or a recorded skip, as the policy says', async () => {
      daemon = await logfileDaemon(dir);
      let c = await LineClient.connect(daemon.tcp);
      await ok(c, `RULE SET e e. shell "echo $TICKD_JOB_ID $TICKD_SCHEDULE $TICKD_NOMINAL_NS >> ${out}"`);
      await ok(c, `SCHEDULE SET ${id} every=1s missed=${missed} keep=1000`);
      await waitFor(() => linesOf(out).length >= 3, 10000, 'three occurrences before the kill');
      c.close();
      await daemon.kill();
      const killedAt = BigInt(Date.now()) * 1_000_000n;
      // The one unavoidable wait: nominal times must pass while no daemon runs.
      await new Promise((r) => setTimeout(r, DOWN_MS));
      daemon = await logfileDaemon(dir);
      const restartedAt = BigInt(Date.now()) * 1_000_000n;
      c = await LineClient.connect(daemon.tcp);
      const before = linesOf(out).length;
      await waitFor(() => linesOf(out).length >= before + 3, 10000, 'three occurrences after the restart');
      await ok(c, `SCHEDULE PAUSE ${id}`); // nothing more decided while the evidence is read
      const jobs = (await listLines(c, `QUERY ${id}:`)).map((l) => l.split(' ')[0]!);
      const skips = await skipsOf(c, id);
      c.close();

      // The runners were told which schedule and which nominal time, and those are the job's.
      const runs = linesOf(out).map((l) => l.split(' '));
      for (const [job, schedule, nominal] of runs) {
        const occ = parseOccurrenceId(job!);
        expect(occ, job).to.not.equal(null);
        expect([schedule, nominal]).to.deep.equal([id, occ!.nominal.toString()]);
      }
      const perJob = new Map<string, number>();
      for (const [job] of runs) perJob.set(job!, (perJob.get(job!) ?? 0) + 1);
      const twice = [...perJob].filter(([, n]) => n > 1);
      expect(twice.length, `run more than once: ${twice.join(' ')}`).to.be.at.most(1);

      // Every nominal second from the first job to the last decided one: one job or one skip.
      const nominals = jobs.map((j) => parseOccurrenceId(j)!.nominal).sort((a, b) => (a < b ? -1 : 1));
      const first = nominals[0]!;
      const last = nominals[nominals.length - 1]!;
      const lastSkip = skips.reduce((m, s) => (s.to > m ? s.to : m), 0n);
      const end = last > lastSkip ? last : lastSkip;
      const asJob = new Set(nominals);
      for (let t = first; t <= end; t += S) {
        const inSkips = skips.filter((s) => s.from <= t && t <= s.to).length;
        expect((asJob.has(t) ? 1 : 0) + inSkips, `nominal ${t}`).to.equal(1);
      }

      // The downtime: nominal times more than a second before the restart and after the kill.
      const missedTimes: bigint[] = [];
      for (let t = (killedAt / S + 1n) * S; t < restartedAt - S; t += S) missedTimes.push(t);
      expect(missedTimes.length).to.be.at.least(3);
      const ranMissed = missedTimes.filter((t) => asJob.has(t));
      const skipped = skips.filter((s) => s.reason === 'missed').reduce((n, s) => n + s.count, 0);
      if (missed === 'skip') {
        expect(ranMissed).to.deep.equal([]);
        expect(skipped).to.be.at.least(missedTimes.length - 1);
      } else if (missed === 'once') {
        expect(ranMissed.length).to.be.at.most(1);
        expect(skipped).to.be.at.least(missedTimes.length - 1);
      } else {
        expect(skipped).to.equal(0);
        expect(ranMissed).to.deep.equal(missedTimes);
      }
    });
  });
}
