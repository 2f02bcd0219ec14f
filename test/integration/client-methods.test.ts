// The client library (lib/client, doc/client.md) against the real daemon: every method of
// tickd-protocol(7) COMMANDS and SCHEDULES, what it returns, and the daemon's errors as
// ReplyErrors carrying the protocol's code.
import { expect } from 'chai';
import { connect, dateFromNs, isoFromNs, nsFromIso, ReplyError, type Client } from '../../lib/client/index.ts';
import { Daemon } from '../helpers/daemon.ts';
import { waitFor } from '../helpers/client.ts';

const FAR = 1893466800000000000n; // 2030-01-01T03:00:00Z

describe('client: every command', function () {
  this.timeout(30_000);
  let daemon: Daemon;
  let client: Client;

  before(async () => {
    daemon = await Daemon.start();
    client = await connect({ addresses: `${daemon.tcp.host}:${daemon.tcp.port}` });
  });
  after(async () => {
    await client?.close();
    await daemon?.stop();
  });

  it('set, get, listJobs, remove: jobs, times as bigint nanoseconds, Date and ISO accepted', async () => {
    await client.set('m.a', FAR);
    await client.set('m.b', new Date('2030-01-01T03:00:00.123Z'));
    await client.set('m.c', '2030-01-01T03:00:00.123456789Z');
    expect(await client.get('m.a')).to.deep.equal({ id: 'm.a', status: 'planned', execution: FAR });
    expect((await client.get('m.b'))?.execution).to.equal(FAR + 123_000_000n);
    expect((await client.get('m.c'))?.execution).to.equal(nsFromIso('2030-01-01T03:00:00.123456789Z'));
    expect(await client.get('m.none')).to.equal(null);
    const listed = await client.listJobs('m.').toArray();
    expect(listed.map((j) => j.id).sort()).to.deep.equal(['m.a', 'm.b', 'm.c']);
    expect(await client.remove('m.a')).to.equal(true);
    expect(await client.remove('m.a')).to.equal(false);
    const ids: string[] = [];
    for await (const j of client.listJobs('m.')) ids.push(j.id);
    expect(ids.sort()).to.deep.equal(['m.b', 'm.c']);
    expect(isoFromNs(FAR)).to.equal('2030-01-01T03:00:00Z');
    expect(dateFromNs(FAR + 123_456_789n).toISOString()).to.equal('2030-01-01T03:00:00.123Z');
  });

  it('a refused argument: ReplyError with the code, the command and the daemon message', async () => {
    const err = await client.set('bad id', FAR).then(() => null, (e: unknown) => e);
    expect(err).to.be.instanceOf(ReplyError);
    expect(err).to.include({ code: 'invalid_args', command: 'SET "bad id" 1893466800000000000' });
    expect((err as ReplyError).detail).to.match(/job identifier/);
  });

  it('setRule with retry, concurrency and rate; listRules reads them back; removeRule', async () => {
    await client.setRule({ id: 'r.opts', pattern: 'x.', runner: { type: 'shell', command: 'echo "hi there"' }, retry: { attempts: 3, delay: '1s', backoff: 'fixed', on: ['5xx', 'exit:75'] }, concurrency: 4, rate: { limit: 10, per: 1_000_000_000n } });
    await client.setRule({ id: 'r.http', pattern: '', runner: { type: 'http', method: 'POST', url: 'http://127.0.0.1:9/x' } });
    await client.setRule({ id: 'r.awf', pattern: 'w.', runner: { type: 'awf', workflow: 'wf', inputs: ['k=v w'] } });
    const rules = await client.listRules().toArray();
    const byId = new Map(rules.map((r) => [r.id, r]));
    expect(byId.get('r.opts')).to.deep.equal({
      id: 'r.opts', pattern: 'x.', runner: { type: 'shell', command: 'echo "hi there"' },
      retry: { attempts: 3, backoff: 'fixed', delay: 1_000_000_000n, factor: 2, maxDelay: 3_600_000_000_000n, jitter: 0, on: ['5xx', 'exit:75'] },
      concurrency: 4, rate: { limit: 10, per: 1_000_000_000n },
    });
    expect(byId.get('r.http')).to.deep.equal({ id: 'r.http', pattern: '', runner: { type: 'http', method: 'POST', url: 'http://127.0.0.1:9/x' } });
    expect(byId.get('r.awf')?.runner).to.deep.equal({ type: 'awf', workflow: 'wf', inputs: ['k=v w'] });
    const refused = await client.setRule({ id: 'r.bad', pattern: 'x', runner: { type: 'shell', command: 'true' }, retry: { attempts: 3 } }).catch((e: unknown) => e);
    expect(refused).to.include({ code: 'invalid_args' });
    expect((refused as ReplyError).detail).to.match(/^retry\.delay: /);
    expect(await client.removeRule('r.awf')).to.equal(true);
    expect(await client.removeRule('r.awf')).to.equal(false);
    await client.removeRule('r.http');
    await client.removeRule('r.opts');
  });

  it('attempts and retry: a failed job, its attempts, run again', async () => {
    await client.setRule({ id: 'r.fail', pattern: 'f.', runner: { type: 'shell', command: 'exit 3' } });
    await client.set('f.1', 0n);
    await waitFor(async () => (await client.get('f.1'))?.status === 'failed', 10_000, 'f.1 failed');
    const attempts = await client.attempts('f.1');
    expect(attempts).to.have.length(1);
    expect(attempts[0]).to.include({ attempt: 1, success: false, summary: 'exit status 3' });
    expect(typeof attempts[0]!.startedNs).to.equal('bigint');
    const before = BigInt(Date.now()) * 1_000_000n;
    const again = await client.retry('f.1');
    expect(again.status).to.equal('planned');
    expect(again.execution >= before - 1_000_000_000n).to.equal(true);
    expect(await client.attempts('none.such').catch((e: unknown) => e)).to.include({ code: 'not_found' });
    await client.removeRule('r.fail');
  });

  it('schedules: set, get, list, next, pause, resume, run, history, remove', async () => {
    const s = await client.setSchedule('s.nightly', { cron: '30 2 * * *', tz: 'Europe/Berlin', keep: 3 });
    expect(s).to.include({ id: 's.nightly', cron: '30 2 * * *', tz: 'Europe/Berlin', keep: 3, paused: false, missed: 'once' });
    expect(typeof s.next).to.equal('bigint');
    expect(await client.getSchedule('s.nightly')).to.deep.include({ id: 's.nightly', cron: '30 2 * * *' });
    expect(await client.getSchedule('s.none')).to.equal(null);
    await client.setSchedule('s.every', { every: 3_600_000_000_000n, start: new Date('2030-01-01T00:00:00Z') });
    expect((await client.getSchedule('s.every'))).to.include({ every: '1h', start: 1893456000000000000n });
    expect((await client.listSchedules('s.').toArray()).map((x) => x.id).sort()).to.deep.equal(['s.every', 's.nightly']);
    const next = await client.nextOccurrences('s.every', 3);
    expect(next).to.deep.equal([1893456000000000000n, 1893459600000000000n, 1893463200000000000n]);
    expect((await client.pauseSchedule('s.nightly')).paused).to.equal(true);
    expect((await client.resumeSchedule('s.nightly')).paused).to.equal(false);
    const job = await client.runSchedule('s.nightly');
    expect(job).to.match(/^s\.nightly:manual-/);
    const history = await client.scheduleHistory('s.nightly', 5);
    expect(history[0]).to.include({ job, manual: true });
    expect(await client.setSchedule('s.bad', { every: '1s', cron: '* * * * *' }).catch((e: unknown) => e)).to.include({ code: 'invalid_args' });
    expect(await client.removeSchedule('s.every')).to.equal(true);
    expect(await client.removeSchedule('s.every')).to.equal(false);
    expect(await client.pauseSchedule('s.every').catch((e: unknown) => e)).to.include({ code: 'not_found' });
  });

  it('stat and ping', async () => {
    const stat = await client.stat();
    expect(Object.keys(stat)).to.include.members(['uptime_ns', 'jobs_total', 'persistence', 'framerate']);
    expect(stat['persistence']).to.equal('memory');
    expect(typeof (await client.ping())).to.equal('bigint');
  });

  it('pipelines: many calls at once, each answered, in order, past maxInflight', async () => {
    const small = await connect({ addresses: `${daemon.tcp.host}:${daemon.tcp.port}`, maxInflight: 8 });
    try {
      const sets = Array.from({ length: 500 }, (_, i) => small.set(`p.${i}`, FAR + BigInt(i)));
      expect(small.pending.inflight).to.be.at.most(8);
      await Promise.all(sets);
      const got = await Promise.all(Array.from({ length: 500 }, (_, i) => small.get(`p.${i}`)));
      expect(got.map((j) => j?.execution)).to.deep.equal(Array.from({ length: 500 }, (_, i) => FAR + BigInt(i)));
      const r = await small.setMany((function* () { for (let i = 0; i < 2000; i++) yield [`q.${i}`, FAR] as const; })());
      expect(r).to.deep.equal({ sent: 2000, ok: 2000, failed: 0 });
      const failures: number[] = [];
      const r2 = await small.setMany([['q.ok', FAR], ['q bad', FAR], ['q.ok2', FAR]], { onError: (e, i) => { failures.push(i); expect(e.code).to.equal('invalid_args'); } });
      expect(r2).to.deep.equal({ sent: 3, ok: 2, failed: 1 });
      expect(failures).to.deep.equal([1]);
    } finally {
      await small.close();
    }
  });

  it('listings read page by page: a slow consumer gets every entry; one left early is read past', async () => {
    const r = await client.setMany(Array.from({ length: 6000 }, (_, i) => [`big.${i}`, FAR] as const));
    expect(r.ok).to.equal(6000);
    const seen = new Set<string>();
    for await (const job of client.listJobs('big.')) {
      seen.add(job.id);
      if (seen.size % 500 === 0) await new Promise((resolve) => setTimeout(resolve, 5)); // behind the daemon's pages
    }
    expect(seen.size).to.equal(6000);
    let taken = 0;
    for await (const job of client.listJobs('big.')) {
      expect(job.id).to.match(/^big\./);
      if (++taken === 10) break;
    }
    const [job, count] = await Promise.all([client.get('big.1'), client.listJobs('big.').toArray()]);
    expect(job?.id).to.equal('big.1');
    expect(count).to.have.length(6000);
  });

  it('close(): pending calls are answered first, later ones fail with code closed', async () => {
    const c = await connect({ addresses: `${daemon.tcp.host}:${daemon.tcp.port}` });
    const ends: string[] = [];
    c.on('end', () => ends.push('end'));
    const pending = c.get('m.b');
    const closing = c.close();
    expect(await c.get('m.b').catch((e: unknown) => e)).to.include({ code: 'closed' });
    expect((await pending)?.id).to.equal('m.b');
    await closing;
    expect(c.status).to.equal('end');
    expect(ends).to.deep.equal(['end']);
  });
});
