// What a graceful stop does to executions (tickd(8) SIGNALS, cluster/shutdown.ts): from the
// signal on nothing more fires, so a job that comes due during the stop stays `planned` and
// runs once at the next start; an execution that finishes within the runners' grace period is
// recorded and does not run again; one still running after it is aborted, stays `triggered`
// and runs once more at the next start. Executions are counted as lines shell rules append to
// a file, over a stop and a restart on the same logfile.
import { expect } from 'chai';
import { join } from 'node:path';
import type { Daemon } from '../helpers/daemon.ts';
import { LineClient, nowNs, stat, waitFor } from '../helpers/client.ts';
import { tempDir } from '../helpers/tmp.ts';
import { linesOf, listLines, logRecords, logfileDaemon, ok, runsPerJob } from './logfile-helpers.ts';

const LATE_IN_MS = 1500; // well inside the stop, which the long job holds for the whole grace

describe('graceful stop and the executions around it', function () {
  this.timeout(40000);
  const dir = tempDir();
  const out = join(dir, 'runs.out');
  const started = join(dir, 'started.out');
  let daemon: Daemon | undefined;
  after(async () => { await daemon?.kill(); });

  it('fires nothing after the signal, records what finishes in the grace period, re-runs only what it aborted', async () => {
    daemon = await logfileDaemon(dir);
    let c = await LineClient.connect(daemon.tcp);
    // Finishes a second after it starts: within the grace period.
    await ok(c, `RULE SET fin fin. shell "echo $TICKD_JOB_ID >> ${started}; sleep 1; echo $TICKD_JOB_ID >> ${out}"`);
    // Runs past the grace period the first time (so the stop lasts all of it), not the second.
    const marker = join(dir, 'long.ran');
    await ok(c, `RULE SET long long. shell "echo $TICKD_JOB_ID >> ${out}; if [ ! -e ${marker} ]; then : > ${marker}; exec sleep 30; fi"`);
    await ok(c, `RULE SET late late. shell "echo $TICKD_JOB_ID >> ${out}"`);
    await ok(c, `SET long.1 ${nowNs()}`);
    await ok(c, `SET fin.1 ${nowNs()}`);
    await waitFor(() => linesOf(started).includes('fin.1') && linesOf(out).includes('long.1'), 10000, 'fin.1 and long.1 to have started');
    const lateAtMs = Date.now() + LATE_IN_MS;
    await ok(c, `SET late.1 ${BigInt(lateAtMs) * 1_000_000n}`);
    c.close();

    expect((await daemon.stop('SIGTERM')).code).to.equal(0);
    expect(Date.now(), 'the stop lasted past late.1\'s due time').to.be.greaterThan(lateAtMs);
    expect(Object.fromEntries(runsPerJob(out)), 'before the restart: late.1 never fired, fin.1 finished').to.deep.equal({ 'long.1': 1, 'fin.1': 1 });
    expect(logRecords(daemon, 'stopping: running executions get the grace period, then are aborted').map((r) => [r['running'], r['graceMs']])).to.deep.equal([[2, 5000]]);

    daemon = await logfileDaemon(dir);
    c = await LineClient.connect(daemon.tcp);
    await waitFor(async () => {
      const jobs = await listLines(c, 'QUERY');
      return jobs.length === 3 && jobs.every((l) => l.split(' ')[1] === 'executed');
    }, 15000, 'every job executed');
    await waitFor(async () => (await stat(c)).get('executions_inflight') === '0', 10000, 'no execution running');
    c.close();
    expect(Object.fromEntries(runsPerJob(out)), 'fin.1 once; long.1 again, as it was aborted; late.1 once').to.deep.equal({ 'long.1': 2, 'fin.1': 1, 'late.1': 1 });
    expect(logRecords(daemon, 'jobs left triggered are dispatched again').map((r) => r['jobs'])).to.deep.equal([1]);
    expect((await daemon.stop()).code).to.equal(0);
    daemon = undefined;
  });
});
