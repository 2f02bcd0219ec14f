// The primary asks the kernel for a short scheduler slice for its main thread, which runs the
// tick (cluster/short-slice.ts), and so does each runner child for its own; nothing they start
// inherits it.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Daemon } from '../helpers/daemon.ts';
import { jobStatus, LineClient, nowNs, waitFor } from '../helpers/client.ts';
import { customSlicesHere, schedSlice } from '../helpers/procfs.ts';

const isSliceLine = (r: Record<string, unknown>) => String(r['msg']).startsWith('tick thread: ');
const isRunnerSliceLine = (r: Record<string, unknown>) => String(r['msg']).startsWith('runner process: ');

describe('tick thread slice', function () {
  this.timeout(30000);
  let daemon: Daemon | null = null;
  afterEach(async () => { await daemon?.stop(); daemon = null; });

  it('the primary and its runner child get a 100 us slice; a runner the child forks keeps the default', async function () {
    daemon = await Daemon.start();
    const line = await daemon.waitForLog(isSliceLine);
    if (!customSlicesHere()) {
      // Either outcome may be right here (a kernel with slices but no /proc/<pid>/sched, say):
      // the line says which, and a default slice says why.
      if (line['msg'] === 'tick thread: default scheduler slice') expect(line['why']).to.be.a('string').and.not.equal('');
      else expect(line).to.include({ msg: 'tick thread: short scheduler slice', sliceUs: 100 });
      this.skip(); // nothing more can be checked without a slice /proc shows
    }
    expect(line).to.include({ msg: 'tick thread: short scheduler slice', sliceUs: 100 });
    expect(schedSlice(daemon.proc.pid!)).to.equal(100_000);
    const out = join(daemon.dir, 'slice.out');
    const c = await LineClient.connect(daemon.tcp);
    try {
      await c.request('1', `RULE SET sl. sl. direct /bin/sh -c "grep se.slice /proc/$$/sched > ${out}"`); // forks the runner child
      const runnerLine = await daemon.waitForLog(isRunnerSliceLine);
      expect(runnerLine).to.include({ msg: 'runner process: short scheduler slice', sliceUs: 100 });
      expect(runnerLine['pid']).to.not.equal(daemon.proc.pid);
      expect(schedSlice(Number(runnerLine['pid']))).to.equal(100_000);
      await c.request('2', `SET sl.1 ${nowNs()}`);
      await waitFor(async () => (await jobStatus(c, 'sl.1')) === 'executed', 10000, 'sl.1 executed');
    } finally {
      c.close();
    }
    const runnerSlice = Number(/(\d+)\s*$/.exec(readFileSync(out, 'utf8'))![1]);
    expect(runnerSlice).to.equal(schedSlice(process.pid)).and.not.equal(100_000);
  });

  it('--tick-slice sets another length, and 0 leaves the default', async function () {
    if (!customSlicesHere()) this.skip();
    daemon = await Daemon.start({ args: ['--tick-slice', '250'] });
    expect(await daemon.waitForLog(isSliceLine)).to.include({ sliceUs: 250 });
    expect(schedSlice(daemon.proc.pid!)).to.equal(250_000);
    await ruleAndJob(daemon); // the runner child exists once a rule does
    const runnerLine = await daemon.waitForLog(isRunnerSliceLine);
    expect(runnerLine).to.include({ sliceUs: 250 });
    expect(schedSlice(Number(runnerLine['pid']))).to.equal(250_000);
    await daemon.stop();

    daemon = await Daemon.start({ args: ['--tick-slice', '0'] });
    await ruleAndJob(daemon);
    expect(schedSlice(daemon.proc.pid!)).to.equal(schedSlice(process.pid));
    expect(daemon.stderr.join('\n')).to.not.include('tick thread');
    expect(daemon.stderr.join('\n')).to.not.include('runner process: ');
  });
});

/** A rule (which forks the runner child) and a job it ran: the child has started. */
async function ruleAndJob(daemon: Daemon): Promise<void> {
  const c = await LineClient.connect(daemon.tcp);
  try {
    await c.request('1', 'RULE SET rj. rj. shell "true"');
    await c.request('2', `SET rj.1 ${nowNs()}`);
    await waitFor(async () => (await jobStatus(c, 'rj.1')) === 'executed', 10000, 'rj.1 executed');
  } finally {
    c.close();
  }
}
