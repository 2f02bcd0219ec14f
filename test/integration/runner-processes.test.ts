// Executions run in runner child processes of the primary (tickd(8) "Runner processes";
// cluster/runner-processes.ts): never in the primary itself; a child killed under its
// executions fails exactly those (at most once per attempt), is replaced, and the queue it
// had not been handed runs in the replacement; several children share the executions; a
// primary that dies takes its children with it. They exist once a rule does, and load a
// network runner's module only for a kind some rule uses.
import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Daemon } from '../helpers/daemon.ts';
import { LineClient, nowNs, stat, waitFor } from '../helpers/client.ts';
import { alive, childrenRunning, cmdline } from '../helpers/procfs.ts';
import { HttpApi } from './http-client.ts';
import { getJob, killRecordedPids, logRecords, ok } from './logfile-helpers.ts';

const CHILD = 'runner-child';

/** The parent pid of `pid` (the 4th field of /proc/<pid>/stat, after the parenthesized name). */
function parentOf(pid: number): number {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[1]);
}

const lines = (file: string): string[] => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter((l) => l !== '') : []);

describe('runner child processes', function () {
  this.timeout(60_000);
  const daemons: Daemon[] = [];
  const pidFiles: string[] = [];
  after(async () => {
    for (const d of daemons) await d.kill();
    for (const f of pidFiles) killRecordedPids(f);
  });

  it('run the executions: a shell runner is a grandchild of the primary, through the one runner child', async () => {
    const daemon = await Daemon.start();
    daemons.push(daemon);
    const primary = daemon.proc.pid!;
    expect(childrenRunning(primary, CHILD), 'no rule, no runner child').to.deep.equal([]);
    const c = await LineClient.connect(daemon.tcp);
    const out = join(daemon.dir, 'ppid.out');
    await ok(c, `RULE SET pp. pp. shell "echo $PPID >> ${out}"`);
    const children = childrenRunning(primary, CHILD);
    expect(children, 'one runner child by default, forked at the first rule').to.have.length(1);
    expect(cmdline(children[0]!).some((a) => a.startsWith('--max-old-space-size='))).to.equal(true);
    await ok(c, `SET pp.1 ${nowNs()}`);
    await waitFor(async () => (await getJob(c, 'pp.1')).startsWith('executed'), 10_000, 'pp.1 executed');
    const ppid = Number(lines(out)[0]);
    expect(ppid).to.not.equal(primary);
    expect(ppid).to.equal(children[0]);
    expect(parentOf(ppid)).to.equal(primary);
    c.close();
    expect((await daemon.stop()).code).to.equal(0);
    expect(alive(children[0]!), 'the child ends with the daemon').to.equal(false);
  });

  it('a runner child killed under its executions: those fail, the queue runs in its replacement, STAT agrees', async () => {
    const daemon = await Daemon.start({ args: ['--max-inflight', '2'], config: { http: { listen: '127.0.0.1:0' } } });
    daemons.push(daemon);
    const primary = daemon.proc.pid!;
    const c = await LineClient.connect(daemon.tcp);
    const pids = join(daemon.dir, 'sleep.pids');
    pidFiles.push(pids);
    const done = join(daemon.dir, 'fast.out');
    // `exec` makes the recorded pid the sleep's: the orphan the kill leaves is killed in after().
    await ok(c, `RULE SET slow. slow. shell "echo $$ >> ${pids}; exec sleep 30"`);
    const [first] = childrenRunning(primary, CHILD);
    await ok(c, `RULE SET fast. fast. shell "echo $TICKD_JOB_ID >> ${done}"`);
    await ok(c, `SET slow.1 ${nowNs()}`);
    await ok(c, `SET slow.2 ${nowNs()}`);
    await waitFor(() => lines(pids).length === 2, 10_000, 'both slow jobs running');
    // The bound (2) is taken: these wait in the primary, never handed to the child that dies.
    for (let i = 1; i <= 3; i++) await ok(c, `SET fast.${i} ${nowNs()}`);
    await waitFor(async () => (await stat(c)).get('executions_pending') === '3', 5000, 'three pending');
    expect((await stat(c)).get('executions_inflight')).to.equal('2');

    process.kill(first!, 'SIGKILL');
    await waitFor(async () => (await getJob(c, 'slow.1')).startsWith('failed') && (await getJob(c, 'slow.2')).startsWith('failed'), 10_000, 'the slow jobs failed');
    await waitFor(async () => {
      const ids = await Promise.all([1, 2, 3].map((i) => getJob(c, `fast.${i}`)));
      return ids.every((s) => s.startsWith('executed'));
    }, 10_000, 'the queued jobs executed by the replacement');
    expect(lines(done).sort()).to.deep.equal(['fast.1', 'fast.2', 'fast.3']);
    expect(lines(pids), 'the failed attempts are not sent again').to.have.length(2);

    const replacement = childrenRunning(primary, CHILD);
    expect(replacement).to.have.length(1);
    expect(replacement[0]).to.not.equal(first);
    const warned = logRecords(daemon, 'runner process died; the attempts it held failed; replacing it');
    expect(warned).to.have.length(1);
    expect(warned[0]).to.include({ level: 40, pid: first, signal: 'SIGKILL', failed: 2 });

    const api = new HttpApi(daemon.http!);
    try {
      const res = await api.request('GET', '/jobs/slow.1');
      const attempt = (JSON.parse(res.text) as { last_attempt: Record<string, unknown> }).last_attempt;
      expect(attempt).to.include({ rule: 'slow.', runner: 'shell', success: false });
      expect(attempt['outcome']).to.deep.equal({ kind: 'runner_error', error: 'the runner process exited (SIGKILL) while the attempt ran' });
    } finally {
      api.close();
    }

    await ok(c, `SET fast.later ${nowNs()}`);
    await waitFor(async () => (await getJob(c, 'fast.later')).startsWith('executed'), 10_000, 'a job after the restart');
    const s = await stat(c);
    expect([s.get('jobs_failed'), s.get('jobs_executed'), s.get('executions_pending'), s.get('executions_inflight')]).to.deep.equal(['2', '4', '0', '0']);
    c.close();
    expect((await daemon.stop()).code).to.equal(0);
  });

  it('--runner-processes 2: two children share the executions', async () => {
    const daemon = await Daemon.start({ args: ['--runner-processes', '2'] });
    daemons.push(daemon);
    const c = await LineClient.connect(daemon.tcp);
    const out = join(daemon.dir, 'ppid.out');
    await ok(c, `RULE SET two. two. shell "echo $PPID >> ${out}"`);
    const children = childrenRunning(daemon.proc.pid!, CHILD);
    expect(children).to.have.length(2);
    const at = nowNs() + 200_000_000n; // all due at one tick, handed over in one turn
    let batch = '';
    for (let i = 0; i < 20; i++) batch += `s${i} SET two.${i} ${at}\n`;
    c.write(batch);
    for (let i = 0; i < 20; i++) await c.collect(`s${i}`);
    await waitFor(() => lines(out).length === 20, 10_000, 'all 20 executed');
    expect([...new Set(lines(out).map(Number))].sort()).to.deep.equal([...children].sort());
    c.close();
    expect((await daemon.stop()).code).to.equal(0);
  });

  it('a primary that dies takes its runner child with it, and the child aborts what it ran', async () => {
    const daemon = await Daemon.start();
    daemons.push(daemon);
    const c = await LineClient.connect(daemon.tcp);
    const pids = join(daemon.dir, 'orphan.pids');
    pidFiles.push(pids);
    await ok(c, `RULE SET orph. orph. shell "echo $$ >> ${pids}; exec sleep 30"`);
    const [child] = childrenRunning(daemon.proc.pid!, CHILD);
    await ok(c, `SET orph.1 ${nowNs()}`);
    await waitFor(() => lines(pids).length === 1, 10_000, 'the sleep running');
    c.close();
    await daemon.kill();
    await waitFor(() => !alive(child!), 5000, 'the runner child gone');
    await waitFor(() => !alive(Number(lines(pids)[0])), 5000, 'its sleep killed');
  });

  it('a network runner\'s module is loaded only once a rule of its kind exists, in a child forked before or after it', async () => {
    const loaded = (d: Daemon): string[] => logRecords(d, 'runner module loaded').map((r) => String(r['kind'])).sort();
    const daemon = await Daemon.start({ config: { log: { level: 'debug' }, database: { persistence: 'logfile' } } });
    daemons.push(daemon);
    const c = await LineClient.connect(daemon.tcp);
    await ok(c, `RULE SET sh. sh. shell "true"`);
    await ok(c, `RULE SET web. web. http POST http://127.0.0.1:9/hook`);
    await waitFor(() => loaded(daemon).length === 1, 10_000, 'the http module loaded');
    await ok(c, `RULE SET web2. web2. http GET http://127.0.0.1:9/other`); // a kind already loaded: nothing more
    await ok(c, 'RULE SET q. q. redis redis://127.0.0.1:9/0 LPUSH key');
    await waitFor(() => loaded(daemon).length === 2, 10_000, 'the redis module loaded');
    expect(loaded(daemon)).to.deep.equal(['http', 'redis']); // never amqp: no rule uses it
    c.close();
    expect((await daemon.stop()).code).to.equal(0);
    // Restarted on the same logfile: its child is forked after the replay, with the kinds in use.
    const again = await Daemon.start({ dir: daemon.dir, config: { log: { level: 'debug' }, database: { persistence: 'logfile' } } });
    daemons.push(again);
    await waitFor(() => loaded(again).length === 2, 10_000, 'the modules of the replayed rules loaded');
    expect(loaded(again)).to.deep.equal(['http', 'redis']);
    expect((await again.stop()).code).to.equal(0);
  });
});
