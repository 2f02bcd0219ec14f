// Durable state across restarts of the real daemon (tickd.toml(5) [database];
// tickd(8) DESCRIPTION; doc/logfile-format.md): jobs in every status, rules of all six kinds,
// replacements and removals survive a graceful stop and a SIGKILL alike; an executed job never
// runs again; a job left triggered runs again; a job and a rule with the same identifier never
// collide; a logfile written by ztick loads; memory mode touches no file; reads write nothing.
import { expect } from 'chai';
import { copyFileSync, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Daemon } from '../helpers/daemon.ts';
import { LineClient, nowNs, stat, waitFor } from '../helpers/client.ts';
import { tempDir } from '../helpers/tmp.ts';
import { FAR_FUTURE_NS, getJob, killRecordedPids, logfileDaemon, logfileOf, logRecords, ok, snapshot, type Snapshot } from './logfile-helpers.ts';

const FIXTURE = new URL('../fixtures/logfile/ztick-v1.log', import.meta.url);

/** Builds a state with every kind of record in it; resolves once the runners have settled it. */
async function populate(c: LineClient, dir: string): Promise<void> {
  const far = FAR_FUTURE_NS;
  // rules of all six kinds, one replaced, one removed
  await ok(c, 'RULE SET m.shell m.shell. shell "echo \\"hello\\" world"');
  await ok(c, 'RULE SET m.direct m.direct. direct /bin/echo "a b" "" c');
  await ok(c, 'RULE SET m.http m.http. http POST https://hooks.example.com/x');
  await ok(c, 'RULE SET m.awf m.awf. awf report --input format=pdf --input "title=a b"');
  await ok(c, 'RULE SET m.amqp m.amqp. amqp amqp://user:pw@localhost:5672/vh exchange rk');
  await ok(c, 'RULE SET m.redis m.redis. redis redis://localhost:6379/1 LPUSH queue');
  await ok(c, 'RULE SET m.replaced m.r. shell "echo old"');
  await ok(c, 'RULE SET m.replaced m.r2. direct /bin/true');
  await ok(c, 'RULE SET m.gone m.gone. shell x');
  await ok(c, 'REMOVERULE m.gone');
  // runners that decide the statuses
  await ok(c, `RULE SET m.once m.once. shell "echo $TICKD_JOB_ID >> ${join(dir, 'once.out')}"`);
  await ok(c, `RULE SET m.trig m.trig. shell "echo $$ >> ${join(dir, 'sleep.pids')}; exec sleep 30"`);
  await ok(c, 'RULE SET m.false m.false. direct /bin/false');
  // jobs: planned, replaced, removed, and the ones that fire
  await ok(c, `SET m.planned ${far}`);
  await ok(c, `SET m.moved ${far + 1n}`);
  await ok(c, `SET m.moved ${far + 2n}`);
  await ok(c, `SET m.removed ${far}`);
  await ok(c, 'REMOVE m.removed');
  await ok(c, 'SET m.neg -5'); // no rule: failed, with a negative execution
  await ok(c, `SET m.once.1 ${nowNs()}`);
  await ok(c, `SET m.trig.1 ${nowNs()}`);
  await ok(c, `SET m.false.1 ${nowNs()}`);
  // a job and a rule with the same identifier: removing one never touches the other
  await ok(c, `SET same.a ${far}`);
  await ok(c, 'RULE SET same.a same.zz. shell x');
  await ok(c, 'REMOVERULE same.a');
  await ok(c, `SET same.b ${far}`);
  await ok(c, 'RULE SET same.b same.yy. shell y');
  await ok(c, 'REMOVE same.b');
  const settled = async () =>
    (await getJob(c, 'm.once.1')).startsWith('executed') &&
    (await getJob(c, 'm.trig.1')).startsWith('triggered') &&
    (await getJob(c, 'm.false.1')).startsWith('failed') &&
    (await getJob(c, 'm.neg')).startsWith('failed') &&
    existsSync(join(dir, 'sleep.pids'));
  await waitFor(settled, 10000, 'the fired jobs to settle');
}

for (const mode of ['graceful stop', 'SIGKILL'] as const) {
  describe(`persistence across a ${mode}`, function () {
    this.timeout(30000);
    const dir = tempDir();
    let daemon: Daemon;
    let prior: Snapshot;
    let restored: Snapshot;

    before(async () => {
      daemon = await logfileDaemon(dir);
      const c = await LineClient.connect(daemon.tcp);
      await populate(c, dir);
      c.close();
      prior = await snapshot(daemon.tcp);
      if (mode === 'SIGKILL') await daemon.kill();
      else expect((await daemon.stop()).code).to.equal(0);
      daemon = await logfileDaemon(dir);
      restored = await snapshot(daemon.tcp);
    });
    after(async () => {
      await daemon?.kill();
      killRecordedPids(join(dir, 'sleep.pids'));
    });

    it('QUERY and LISTRULES show exactly the state from before', () => {
      expect(prior.jobs).to.have.length(7);
      expect(prior.rules).to.have.length(11);
      expect(restored).to.deep.equal(prior);
    });

    it('keeps every status and every execution, the replaced value of a job and of a rule', () => {
      expect(restored.jobs).to.include.members([
        `m.planned planned ${FAR_FUTURE_NS}`,
        `m.moved planned ${FAR_FUTURE_NS + 2n}`,
        'm.neg failed -5',
        `same.a planned ${FAR_FUTURE_NS}`,
      ]);
      const statuses = restored.jobs.map((l) => l.split(' ')[1]).sort();
      expect(statuses).to.deep.equal(['executed', 'failed', 'failed', 'planned', 'planned', 'planned', 'triggered']);
      expect(restored.rules).to.include.members([
        'm.shell m.shell. shell "echo \\"hello\\" world"',
        'm.direct m.direct. direct /bin/echo "a b" "" c',
        'm.http m.http. http POST https://hooks.example.com/x',
        'm.awf m.awf. awf report --input format=pdf --input "title=a b"',
        'm.amqp m.amqp. amqp amqp://user:pw@localhost:5672/vh exchange rk',
        'm.redis m.redis. redis redis://localhost:6379/1 LPUSH queue',
        'm.replaced m.r2. direct /bin/true',
        'same.b same.yy. shell y',
      ]);
    });

    it('removals survive: the removed job and rule stay gone, their namesakes of the other kind stay', async () => {
      const ids = (lines: string[]) => lines.map((l) => l.split(' ')[0]);
      expect(ids(restored.jobs)).to.not.include.members(['m.removed']);
      expect(ids(restored.jobs)).to.not.include('same.b');
      expect(ids(restored.rules)).to.not.include('m.gone');
      expect(ids(restored.rules)).to.not.include('same.a');
      const c = await LineClient.connect(daemon.tcp);
      expect(await c.request('1', 'GET m.removed')).to.deep.equal(['1 ERROR not_found job "m.removed" does not exist']);
      expect(await c.request('2', 'REMOVERULE m.gone')).to.deep.equal(['2 ERROR not_found rule "m.gone" does not exist']);
      c.close();
    });

    it('an executed job is not run again; the one left triggered is dispatched again', async () => {
      const c = await LineClient.connect(daemon.tcp);
      const s = await stat(c);
      expect(s.get('jobs_triggered')).to.equal('1');
      expect(s.get('executions_inflight')).to.equal('1'); // m.trig.1 only
      expect(logRecords(daemon, 'jobs left triggered are dispatched again').map((r) => r['jobs'])).to.deep.equal([1]);
      await waitFor(() => readFileSync(join(dir, 'sleep.pids'), 'utf8').trim().split('\n').length === 2, 10000, 'the second attempt of m.trig.1');
      // a job set now on the same rule runs; once it has, the file holds it and m.once.1 once
      await ok(c, `SET m.once.sentinel ${nowNs()}`);
      await waitFor(async () => (await getJob(c, 'm.once.sentinel')).startsWith('executed'), 10000, 'the sentinel');
      expect(readFileSync(join(dir, 'once.out'), 'utf8')).to.equal('m.once.1\nm.once.sentinel\n');
      expect(await getJob(c, 'm.once.1')).to.match(/^executed /);
      c.close();
    });
  });
}

describe('persistence: a job left triggered by a SIGKILL', function () {
  this.timeout(30000);
  const dir = tempDir();
  let daemon: Daemon | undefined;
  after(async () => {
    await daemon?.kill();
    killRecordedPids(join(dir, 're.pid'));
  });

  it('is dispatched again after the restart and ends executed', async () => {
    daemon = await logfileDaemon(dir);
    let c = await LineClient.connect(daemon.tcp);
    // The first attempt blocks (sleep 30); the second one finds the marker and succeeds.
    const runs = join(dir, 'runs.out');
    await ok(c, `RULE SET re re. shell "echo run >> ${runs}; if [ ! -e ${join(dir, 'first')} ]; then : > ${join(dir, 'first')}; echo $$ > ${join(dir, 're.pid')}; exec sleep 30; fi"`);
    await ok(c, `SET re.job ${nowNs()}`);
    await waitFor(async () => existsSync(join(dir, 're.pid')) && (await getJob(c, 're.job')).startsWith('triggered'), 10000, 're.job triggered');
    c.close();
    await daemon.kill();
    expect(readFileSync(runs, 'utf8')).to.equal('run\n');

    daemon = await logfileDaemon(dir);
    c = await LineClient.connect(daemon.tcp);
    await waitFor(async () => (await getJob(c, 're.job')).startsWith('executed'), 10000, 're.job executed');
    expect(readFileSync(runs, 'utf8')).to.equal('run\nrun\n');
    c.close();
  });
});

describe('persistence: a logfile written by ztick', function () {
  this.timeout(30000);
  let daemon: Daemon | undefined;
  after(async () => { await daemon?.stop(); });

  it('loads: GET, QUERY and LISTRULES show its content', async () => {
    const dir = tempDir();
    copyFileSync(FIXTURE, logfileOf(dir));
    daemon = await logfileDaemon(dir);
    // `toto` was left triggered: it is dispatched again (rule t: shell `titi`, which fails).
    expect(logRecords(daemon, 'jobs left triggered are dispatched again').map((r) => r['jobs'])).to.deep.equal([1]);
    const c = await LineClient.connect(daemon.tcp);
    expect(await getJob(c, 'neg')).to.equal('failed -1');
    expect(await getJob(c, 'tatat')).to.equal('g ERROR not_found job "tatat" does not exist');
    await waitFor(async () => (await getJob(c, 'toto')) === 'failed 1605457800000000001', 10000, 'toto to fail');
    c.close();
    const state = await snapshot(daemon.tcp);
    expect(state.jobs).to.deep.equal(['neg failed -1', 'toto failed 1605457800000000001']);
    expect(state.rules).to.deep.equal([
      'd app. direct /bin/echo "hello world" ""',
      'h app.hook. http POST https://hooks.example.com/x',
      'r app.redis. redis redis://localhost:6379/0 RPUSH queue',
      't toto shell titi',
      'w app.wf. awf report --input format=pdf',
    ]);
  });
});

describe('persistence: memory mode', function () {
  this.timeout(30000);

  it('creates no file in the working directory or at logfile_path, and says so in STAT', async () => {
    const dir = tempDir();
    // the default relative logfile_path, resolved against the working directory (dir)
    const daemon = await Daemon.start({ dir, config: { database: { persistence: 'memory', logfile_path: 'logfile', compression_interval: 1 } } });
    try {
      const c = await LineClient.connect(daemon.tcp);
      await ok(c, 'RULE SET mem mem. direct /bin/true');
      await ok(c, `SET mem.job ${nowNs()}`);
      await ok(c, `SET mem.later ${FAR_FUTURE_NS}`);
      await ok(c, 'REMOVE mem.later');
      await ok(c, 'REMOVERULE mem');
      expect((await stat(c)).get('persistence')).to.equal('memory');
      expect((await stat(c)).get('compression')).to.equal('idle');
      c.close();
    } finally {
      expect((await daemon.stop()).code).to.equal(0);
    }
    expect(readdirSync(dir)).to.deep.equal(['tickd.toml']);
  });

  it('STAT says logfile when persisting to a file', async () => {
    const dir = tempDir();
    const daemon = await logfileDaemon(dir);
    try {
      const c = await LineClient.connect(daemon.tcp);
      expect((await stat(c)).get('persistence')).to.equal('logfile');
      c.close();
    } finally {
      await daemon.stop();
    }
  });
});

describe('persistence: read commands', function () {
  this.timeout(30000);

  it('GET, QUERY, LISTRULES and STAT write nothing to the logfile', async () => {
    const dir = tempDir();
    const daemon = await logfileDaemon(dir);
    try {
      const c = await LineClient.connect(daemon.tcp);
      await ok(c, 'RULE SET rd rd. direct /bin/true');
      await ok(c, `SET rd.job ${FAR_FUTURE_NS}`);
      const path = logfileOf(dir);
      const bytes = readFileSync(path);
      expect(bytes.length).to.be.greaterThan(0);
      for (let i = 0; i < 20; i++) {
        await c.request(`g${i}`, 'GET rd.job');
        await c.request(`n${i}`, 'GET rd.missing');
        await c.request(`q${i}`, 'QUERY');
        await c.request(`p${i}`, 'QUERY rd.');
        await c.request(`l${i}`, 'LISTRULES');
        await c.request(`s${i}`, 'STAT');
      }
      expect(readFileSync(path).equals(bytes)).to.equal(true);
      // the check can fail: a write does grow the file
      await ok(c, `SET rd.job2 ${FAR_FUTURE_NS}`);
      expect(statSync(path).size).to.be.greaterThan(bytes.length);
      c.close();
    } finally {
      await daemon.stop();
    }
  });
});
