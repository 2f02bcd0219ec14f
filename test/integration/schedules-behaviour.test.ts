// Schedules through the real daemon (tickd-protocol(7) SCHEDULES; issue 37 item 12), in real
// time: DST previews in America/New_York and Europe/Berlin (a fixed time in the spring-forward
// gap, one in the fall-back repeated hour, a stepped expression across both); overlap skip and
// queue with a runner slower than the interval (never two at once); limit, start and end;
// pause and resume without a burst; and a schedule 40 days away that neither fires early nor
// moves across a kill -9 (no timer holds it: the tick compares).
import { expect } from 'chai';
import { join } from 'node:path';
import type { Daemon } from '../helpers/daemon.ts';
import { LineClient, nowNs, waitFor } from '../helpers/client.ts';
import { tempDir } from '../helpers/tmp.ts';
import { linesOf, listLines, logfileDaemon, ok } from './logfile-helpers.ts';
import { expectDecidedOnce, skipsOf } from './schedule-evidence.ts';

const S = 1_000_000_000n;
const ns = (iso: string): bigint => BigInt(Date.parse(iso)) * 1_000_000n;

/** The `key=value` counters and fields of a schedule line. */
function fieldsOf(line: string): Map<string, string> {
  return new Map(line.split(' ').filter((t) => t.includes('=')).map((t) => [t.slice(0, t.indexOf('=')), t.slice(t.indexOf('=') + 1)] as [string, string]));
}

describe('schedules through the daemon: DST, overlap, bounds, pause, far away', function () {
  this.timeout(60000);
  const dir = tempDir();
  const out = join(dir, 'runs.out');
  let daemon: Daemon;
  let c: LineClient;
  before(async () => {
    daemon = await logfileDaemon(dir);
    c = await LineClient.connect(daemon.tcp);
    // Each run appends `<job> start <ns>` and `<job> end <ns>`; `slow.` ones take 2.5 s.
    await ok(c, `RULE SET fast b. shell "echo $TICKD_JOB_ID start $(date +%s%N) >> ${out}; echo $TICKD_JOB_ID end $(date +%s%N) >> ${out}"`);
    await ok(c, `RULE SET slow slow. shell "echo $TICKD_JOB_ID start $(date +%s%N) >> ${out}; sleep 2.5; echo $TICKD_JOB_ID end $(date +%s%N) >> ${out}"`);
  });
  after(async () => {
    c?.close();
    await daemon?.kill();
  });

  const preview = async (id: string, spec: string, tz: string, start: string, n = 5): Promise<string[]> => {
    await ok(c, `SCHEDULE SET ${id} "${spec}" tz=${tz} start=${ns(start)}`);
    const lines = await c.request('n', `SCHEDULE NEXT ${id} ${n}`);
    expect(lines.pop()).to.equal('n OK');
    return lines.map((l) => new Date(Number(BigInt(l.split(' ')[1]!) / 1_000_000n)).toISOString().replace('.000Z', 'Z'));
  };

  it('previews DST in Europe/Berlin: 02:30 in the gap runs at 03:00 that day; in the repeated hour, once; */30 in both copies', async () => {
    expect(await preview('dst.b.spring', 'cron=30 2 * * *', 'Europe/Berlin', '2027-03-27T00:00:00Z', 3))
      .to.deep.equal(['2027-03-27T01:30:00Z', '2027-03-28T01:00:00Z', '2027-03-29T00:30:00Z']);
    expect(await preview('dst.b.fall', 'cron=30 2 * * *', 'Europe/Berlin', '2027-10-30T00:00:00Z', 3))
      .to.deep.equal(['2027-10-30T00:30:00Z', '2027-10-31T00:30:00Z', '2027-11-01T01:30:00Z']);
    // 02:00 and 02:30 CEST, then 02:00 and 02:30 CET: every half hour in UTC.
    expect(await preview('dst.b.step', 'cron=*/30 * * * *', 'Europe/Berlin', '2027-10-31T00:00:00Z'))
      .to.deep.equal(['2027-10-31T00:00:00Z', '2027-10-31T00:30:00Z', '2027-10-31T01:00:00Z', '2027-10-31T01:30:00Z', '2027-10-31T02:00:00Z']);
    // 01:00 and 01:30 CET, then 03:00 CEST: 02:00 and 02:30 do not exist that night.
    expect(await preview('dst.b.step2', 'cron=*/30 * * * *', 'Europe/Berlin', '2027-03-28T00:00:00Z', 3))
      .to.deep.equal(['2027-03-28T00:00:00Z', '2027-03-28T00:30:00Z', '2027-03-28T01:00:00Z']);
  });

  it('previews DST in America/New_York the same way', async () => {
    expect(await preview('dst.n.spring', 'cron=30 2 * * *', 'America/New_York', '2027-03-13T00:00:00Z', 3))
      .to.deep.equal(['2027-03-13T07:30:00Z', '2027-03-14T07:00:00Z', '2027-03-15T06:30:00Z']);
    expect(await preview('dst.n.fall', 'cron=30 1 * * *', 'America/New_York', '2027-11-06T00:00:00Z', 3))
      .to.deep.equal(['2027-11-06T05:30:00Z', '2027-11-07T05:30:00Z', '2027-11-08T06:30:00Z']);
    expect(await preview('dst.n.step', 'cron=*/30 * * * *', 'America/New_York', '2027-11-07T05:00:00Z'))
      .to.deep.equal(['2027-11-07T05:00:00Z', '2027-11-07T05:30:00Z', '2027-11-07T06:00:00Z', '2027-11-07T06:30:00Z', '2027-11-07T07:00:00Z']);
    expect(await preview('dst.n.step2', 'cron=*/30 * * * *', 'America/New_York', '2027-03-14T06:00:00Z', 3))
      .to.deep.equal(['2027-03-14T06:00:00Z', '2027-03-14T06:30:00Z', '2027-03-14T07:00:00Z']);
  });

  /** [start, end] of each run of the schedule `id`'s occurrences, from the runs file. */
  const runsOfSchedule = (id: string): Array<{ job: string; start: bigint; end: bigint | null }> => {
    const runs = new Map<string, { job: string; start: bigint; end: bigint | null }>();
    for (const line of linesOf(out)) {
      const [job, what, at] = line.split(' ');
      if (!job!.startsWith(`${id}:`)) continue;
      if (what === 'start') runs.set(job!, { job: job!, start: BigInt(at!), end: null });
      else runs.get(job!)!.end = BigInt(at!);
    }
    return [...runs.values()];
  };

  for (const overlap of ['skip', 'queue'] as const) {
    it(`overlap=${overlap}: with a runner slower than the interval, never two at once, and the rest ${overlap === 'skip' ? 'skipped' : 'queued one at a time'}`, async () => {
      const id = `slow.${overlap}`;
      await ok(c, `SCHEDULE SET ${id} every=1s overlap=${overlap} keep=100`);
      await waitFor(() => runsOfSchedule(id).filter((r) => r.end !== null).length >= 2, 20000, 'two runs to end');
      await ok(c, `SCHEDULE PAUSE ${id}`);
      await waitFor(() => runsOfSchedule(id).every((r) => r.end !== null), 10000, 'the last run to end');
      const runs = runsOfSchedule(id).sort((a, b) => (a.start < b.start ? -1 : 1));
      for (let i = 1; i < runs.length; i++) expect(runs[i]!.start > runs[i - 1]!.end!, `${runs[i]!.job} started before ${runs[i - 1]!.job} ended`).to.equal(true);
      const skips = await skipsOf(c, id);
      const skipped = skips.filter((s) => s.reason === 'overlap').reduce((n, s) => n + s.count, 0);
      expect(skipped, 'occurrences skipped for overlap').to.be.at.least(1);
      const jobs = (await listLines(c, `QUERY ${id}:`)).map((l) => l.split(' ')[0]!);
      expectDecidedOnce(jobs, skips, S);
      const fields = fieldsOf((await c.request('g', `SCHEDULE GET ${id}`))[0]!);
      expect(Number(fields.get('skipped_overlap'))).to.equal(skipped);
    });
  }

  it('limit: two occurrences run, then the schedule is over (next none)', async () => {
    const line = await ok(c, 'SCHEDULE SET b.limit every=1s limit=2');
    expect(fieldsOf(line).get('limit')).to.equal('2');
    await waitFor(async () => fieldsOf((await c.request('g', 'SCHEDULE GET b.limit'))[0]!).get('next') === 'none', 10000, 'the limit reached');
    await waitFor(() => runsOfSchedule('b.limit').filter((r) => r.end !== null).length === 2, 5000, 'both runs');
    const jobs = await listLines(c, 'QUERY b.limit:');
    expect(jobs).to.have.length(2);
    expect(fieldsOf((await c.request('g', 'SCHEDULE GET b.limit'))[0]!).get('fired')).to.equal('2');
  });

  it('start and end: occurrences only in [start, end), aligned to start', async () => {
    const start = (nowNs() / S + 2n) * S + 250_000_000n; // a quarter second past a whole second
    await ok(c, `SCHEDULE SET b.window every=1s start=${start} end=${start + 2n * S}`);
    await waitFor(async () => fieldsOf((await c.request('g', 'SCHEDULE GET b.window'))[0]!).get('next') === 'none', 10000, 'the window over');
    await waitFor(() => runsOfSchedule('b.window').filter((r) => r.end !== null).length === 2, 5000, 'both runs');
    const jobs = (await listLines(c, 'QUERY b.window:')).map((l) => l.split(' ')[0]);
    const { occurrenceId } = await import('../../lib/schedule/occurrence.ts');
    expect(jobs).to.deep.equal([occurrenceId('b.window', start), occurrenceId('b.window', start + S)]);
  });

  it('pause and resume: nothing runs while paused, and resuming runs at most the latest missed one (missed=once), no burst', async () => {
    await ok(c, 'SCHEDULE SET b.pause every=1s missed=once keep=100');
    await waitFor(() => runsOfSchedule('b.pause').length >= 2, 10000, 'two runs');
    await ok(c, 'SCHEDULE PAUSE b.pause');
    const pausedAt = nowNs();
    const before = runsOfSchedule('b.pause').length;
    await new Promise((r) => setTimeout(r, 3500)); // the one unavoidable wait: nominal times pass while paused
    expect(runsOfSchedule('b.pause').length - before, 'runs while paused (one decided just before may start)').to.be.at.most(1);
    const duringPause = runsOfSchedule('b.pause').length;
    await ok(c, 'SCHEDULE RESUME b.pause');
    const resumedAt = nowNs();
    await waitFor(() => runsOfSchedule('b.pause').length >= duringPause + 2, 10000, 'runs after the resume');
    await ok(c, 'SCHEDULE PAUSE b.pause');
    const { parseOccurrenceId } = await import('../../lib/schedule/occurrence.ts');
    const inPause = runsOfSchedule('b.pause').map((r) => parseOccurrenceId(r.job)!.nominal).filter((t) => t > pausedAt + S && t < resumedAt - S);
    expect(inPause.length, 'occurrences of the pause that ran').to.be.at.most(1);
    const skips = await skipsOf(c, 'b.pause');
    expect(skips.filter((s) => s.reason === 'missed').reduce((n, s) => n + s.count, 0)).to.be.at.least(2);
  });

  it('a schedule 40 days away neither fires early nor moves across a kill -9', async () => {
    const start = (nowNs() / S + 40n * 86_400n) * S;
    const line = await ok(c, `SCHEDULE SET b.far every=1d start=${start}`);
    expect(fieldsOf(line).get('next')).to.equal(String(start));
    c.close();
    await daemon.kill();
    daemon = await logfileDaemon(dir);
    c = await LineClient.connect(daemon.tcp);
    expect(fieldsOf((await c.request('g', 'SCHEDULE GET b.far'))[0]!).get('next')).to.equal(String(start));
    // The tick goes on (a job due now runs) and the far one has made nothing.
    await ok(c, `SET b.now ${nowNs()}`);
    await waitFor(() => linesOf(out).some((l) => l.startsWith('b.now end ')), 10000, 'a job due now to run');
    expect(await listLines(c, 'QUERY b.far:')).to.deep.equal([]);
  });
});
