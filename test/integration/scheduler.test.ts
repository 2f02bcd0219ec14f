// Jobs firing on the real daemon: shell and direct runners, no-rule failures, re-arming a
// running job, and concurrency (a slow runner never delays another job).
import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Daemon } from '../helpers/daemon.ts';
import { jobStatus, LineClient, nowNs, stat, waitFor } from '../helpers/client.ts';

describe('scheduler', function () {
  this.timeout(30000);
  let daemon: Daemon;
  let c: LineClient;
  before(async () => { daemon = await Daemon.start(); });
  after(async () => { await daemon?.stop(); });
  beforeEach(async () => { c = await LineClient.connect(daemon.tcp); });
  afterEach(() => c.close());

  const statusOf = (id: string) => jobStatus(c, id);
  const waitStatus = (id: string, status: string, ms = 10000) => waitFor(async () => (await statusOf(id)) === status, ms, `${id} ${status}`);

  it('fires a shell rule with TICKD_JOB_ID and TICKD_JOB_EXECUTION in the environment', async () => {
    const out = join(daemon.dir, 'shell.out');
    await c.request('1', `RULE SET sh. sh. shell "echo $TICKD_JOB_ID $TICKD_JOB_EXECUTION >> ${out}"`);
    const at = nowNs();
    await c.request('2', `SET sh.job1 ${at}`);
    await waitStatus('sh.job1', 'executed');
    expect(readFileSync(out, 'utf8')).to.equal(`sh.job1 ${at}\n`);
  });

  it('fires a direct rule without a shell: metacharacters stay literal', async () => {
    const out = join(daemon.dir, 'direct.out');
    await c.request('1', `RULE SET di. di. direct /bin/sh -c "printf %s \\"$0\\" > ${out}" "$HOME;|&"`);
    await c.request('2', `SET di.job ${nowNs()}`);
    await waitStatus('di.job', 'executed');
    expect(readFileSync(out, 'utf8')).to.equal('$HOME;|&');
  });

  it('a failing command makes the job failed', async () => {
    await c.request('1', 'RULE SET fl. fl. direct /bin/false');
    await c.request('2', `SET fl.job ${nowNs()}`);
    await waitStatus('fl.job', 'failed');
  });

  it('a due job with no matching rule is failed', async () => {
    await c.request('1', `SET norule.at.all ${nowNs()}`);
    await waitStatus('norule.at.all', 'failed');
  });

  it('the longest matching pattern wins', async () => {
    const out = join(daemon.dir, 'longest.out');
    await c.request('1', `RULE SET lp.short lp. shell "echo short >> ${out}"`);
    await c.request('2', `RULE SET lp.long lp.deep. shell "echo long >> ${out}"`);
    await c.request('3', `SET lp.deep.job ${nowNs()}`);
    await waitStatus('lp.deep.job', 'executed');
    expect(readFileSync(out, 'utf8')).to.equal('long\n');
  });

  it('a job in the future waits for its time', async () => {
    await c.request('1', 'RULE SET fut. fut. direct /bin/true');
    await c.request('2', `SET fut.job ${nowNs() + 60_000_000_000n}`);
    expect(await statusOf('fut.job')).to.equal('planned');
  });

  it('SET while the first attempt still runs re-arms the job; the old result is ignored', async () => {
    const out = join(daemon.dir, 'rearm.out');
    await c.request('1', `RULE SET ra. ra. shell "echo start >> ${out}; sleep 1; echo end >> ${out}"`);
    await c.request('2', `SET ra.job ${nowNs()}`);
    await waitStatus('ra.job', 'triggered');
    const second = nowNs() + 1_500_000_000n;
    await c.request('3', `SET ra.job ${second}`);
    expect((await c.request('4', 'GET ra.job'))[0]).to.equal(`4 OK planned ${second}`);
    // The first attempt ends while the job is planned again: its result must not change it.
    await waitFor(() => existsSync(out) && readFileSync(out, 'utf8') === 'start\nend\n', 5000, 'first attempt end');
    expect(await statusOf('ra.job')).to.equal('planned');
    await waitStatus('ra.job', 'executed', 8000);
    expect(readFileSync(out, 'utf8')).to.equal('start\nend\nstart\nend\n');
  });

  it('REMOVE of a triggered job deletes it and ignores the running attempt', async () => {
    await c.request('1', 'RULE SET rm. rm. shell "sleep 1"');
    await c.request('2', `SET rm.job ${nowNs()}`);
    await waitStatus('rm.job', 'triggered');
    expect(await c.request('3', 'REMOVE rm.job')).to.deep.equal(['3 OK']);
    await waitFor(async () => (await stat(c)).get('executions_inflight') === '0', 5000, 'attempt end');
    expect((await c.request('4', 'GET rm.job'))[0]).to.match(/^4 ERROR not_found/);
  });

  it('many slow jobs do not delay a fast one, and STAT counts them in flight', async () => {
    await c.request('1', 'RULE SET slow. slow. shell "sleep 2"');
    await c.request('2', 'RULE SET fast. fast. direct /bin/true');
    const t = nowNs();
    let batch = '';
    for (let i = 0; i < 20; i++) batch += `s${i} SET slow.${i} ${t}\n`;
    c.write(batch);
    for (let i = 0; i < 20; i++) await c.collect(`s${i}`);
    await waitFor(async () => Number((await stat(c)).get('executions_inflight')) >= 20, 5000, '20 in flight');
    const started = Date.now();
    await c.request('3', `SET fast.one ${nowNs()}`);
    await waitStatus('fast.one', 'executed', 1500);
    expect(Date.now() - started).to.be.below(1500);
    expect((await c.request('4', 'GET slow.0'))[0]).to.equal(`4 OK triggered ${t}`);
  });
});

describe('scheduler at debug level', function () {
  this.timeout(30000);
  let daemon: Daemon;
  before(async () => { daemon = await Daemon.start({ config: { log: { level: 'debug' } } }); });
  after(async () => { await daemon?.stop(); });

  it('logs each firing with its outcome and how late it fired, never early', async () => {
    const c = await LineClient.connect(daemon.tcp);
    try {
      await c.request('1', 'RULE SET lg. lg. direct /bin/true');
      const at = nowNs() + 200_000_000n;
      await c.request('2', `SET lg.job ${at}`);
      await c.request('3', `SET nolog.job ${at}`);
      const fired = await daemon.waitForLog((r) => r['msg'] === 'job fired' && r['job'] === 'lg.job');
      expect(fired).to.include({ outcome: 'triggered', execution: String(at), component: 'scheduler' });
      expect(fired['lateness_ms']).to.be.a('number').at.least(0).and.below(1000);
      const failed = await daemon.waitForLog((r) => r['msg'] === 'job fired' && r['job'] === 'nolog.job');
      expect(failed['outcome']).to.equal('no-rule');
    } finally {
      c.close();
    }
  });
});
