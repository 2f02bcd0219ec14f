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
import { expectDecidedOnce, runsOf, skipsOf } from './schedule-evidence.ts';

const S = 1_000_000_000n;
const DOWN_MS = 5500;

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
      const restartingAt = BigInt(Date.now()) * 1_000_000n;
      daemon = await logfileDaemon(dir);
      c = await LineClient.connect(daemon.tcp);
      const before = linesOf(out).length;
      await waitFor(() => linesOf(out).length >= before + 3, 10000, 'three occurrences after the restart');
      await ok(c, `SCHEDULE PAUSE ${id}`); // nothing more decided while the evidence is read
      const jobs = (await listLines(c, `QUERY ${id}:`)).map((l) => l.split(' ')[0]!);
      const skips = await skipsOf(c, id);
      c.close();

      // The runners were told which schedule and which nominal time; a kill may catch one running.
      const twice = [...runsOf(linesOf(out), id)].filter(([, n]) => n > 1);
      expect(twice.length, `run more than once: ${twice.join(' ')}`).to.be.at.most(1);
      const asJob = expectDecidedOnce(jobs, skips, S);

      // The downtime: nominal times no decision could have reached before the kill (a schedule is
      // decided up to half its period ahead: their jobs may exist and run), and more than a
      // second before the restarted daemon could decide anything (so each was missed).
      const missedTimes: bigint[] = [];
      for (let t = ((killedAt + S / 2n) / S + 1n) * S; t < restartingAt - S; t += S) missedTimes.push(t);
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
