// Restart after downtime (tickd(8) DESCRIPTION): a job that came due while the daemon was down
// runs exactly once at the next start; a job left `triggered` on disk (its execution was
// running when the daemon stopped) runs exactly once more. Both after a graceful stop (SIGTERM)
// and after a SIGKILL. Executions are counted as lines a shell rule appends to a file, read
// only once every job reports `executed` and no execution is running or queued any more.
import { expect } from 'chai';
import { join } from 'node:path';
import type { Daemon } from '../helpers/daemon.ts';
import { LineClient, nowNs, stat, waitFor } from '../helpers/client.ts';
import { tempDir } from '../helpers/tmp.ts';
import { listLines, logRecords, logfileDaemon, ok, runsPerJob } from './logfile-helpers.ts';

const OVERDUE = 20; // `ov.*`: still planned at the stop, due while the daemon is down
const LEFT = 20; // `lt.*`: running at the stop, so left triggered on disk
const DUE_IN_MS = 1500;

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}.${i}`);

for (const how of ['SIGTERM', 'SIGKILL'] as const) {
  describe(`restart after downtime (stopped by ${how})`, function () {
    this.timeout(30000);
    const dir = tempDir();
    const out = join(dir, 'runs.out');
    let daemon: Daemon | undefined;
    after(async () => { await daemon?.kill(); });

    it('runs each overdue job exactly once and each job left triggered exactly once more', async () => {
      daemon = await logfileDaemon(dir);
      let c = await LineClient.connect(daemon.tcp);
      await ok(c, `RULE SET ov ov. shell "echo $TICKD_JOB_ID >> ${out}"`);
      // Appends, then the first time is still running when the daemon stops, past the stop's
      // grace period for runners: the job stays triggered on disk. The second time it ends.
      await ok(c, `RULE SET lt lt. shell "echo $TICKD_JOB_ID >> ${out}; if [ ! -e ${dir}/$TICKD_JOB_ID.ran ]; then : > ${dir}/$TICKD_JOB_ID.ran; exec sleep 30; fi"`);
      for (const id of ids('lt', LEFT)) await ok(c, `SET ${id} ${nowNs()}`);
      await waitFor(() => runsPerJob(out).size === LEFT, 10000, 'every lt job to have started');
      const dueAtMs = Date.now() + DUE_IN_MS;
      for (const id of ids('ov', OVERDUE)) await ok(c, `SET ${id} ${BigInt(dueAtMs) * 1_000_000n}`);
      c.close();
      await daemon.stop(how);
      expect([...runsPerJob(out).keys()].filter((id) => id.startsWith('ov.')), 'ov jobs run before the stop').to.deep.equal([]);

      // The one unavoidable wait: the due time must pass while nothing runs.
      await new Promise((r) => setTimeout(r, Math.max(0, dueAtMs - Date.now()) + 100));

      daemon = await logfileDaemon(dir);
      c = await LineClient.connect(daemon.tcp);
      await waitFor(async () => {
        const jobs = await listLines(c, 'QUERY');
        return jobs.length === OVERDUE + LEFT && jobs.every((l) => l.split(' ')[1] === 'executed');
      }, 15000, 'every job executed');
      // An execution whose attempt went stale (a duplicate) may still be running: wait it out.
      await waitFor(async () => {
        const s = await stat(c);
        return s.get('executions_inflight') === '0' && s.get('executions_pending') === '0';
      }, 10000, 'no execution running or queued');
      c.close();

      const runs = runsPerJob(out);
      const wrong = (expected: number, prefix: string, n: number) =>
        ids(prefix, n).filter((id) => runs.get(id) !== expected).map((id) => `${id} ran ${runs.get(id) ?? 0} times`);
      expect(wrong(1, 'ov', OVERDUE), 'overdue jobs (expected once each)').to.deep.equal([]);
      expect(wrong(2, 'lt', LEFT), 'jobs left triggered (expected once before, once after)').to.deep.equal([]);
      expect(runs.size).to.equal(OVERDUE + LEFT);
      expect(logRecords(daemon, 'jobs left triggered are dispatched again').map((r) => r['jobs'])).to.deep.equal([LEFT]);
      expect((await daemon.stop()).code).to.equal(0);
      daemon = undefined;
    });
  });
}
