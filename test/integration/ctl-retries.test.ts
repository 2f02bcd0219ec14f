// `tickd ctl` and retries (issue 38; tickd-ctl(1) COMMANDS) against the real daemon: rule
// options through `rule set`, shown as the HTTP interface and LISTRULES show them; `job get` of
// a job waiting for its next attempt, and its attempts (ATTEMPTS); `job retry` (RETRY) running
// a failed job afresh. The daemon's HTTP interface is the witness: the job's attempt number,
// and the attempt history as GET /jobs/{id}/attempts tells it.
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Daemon } from '../helpers/daemon.ts';
import { LineClient, jobStatus, nowNs, waitFor } from '../helpers/client.ts';
import { addrOf, ctl } from '../helpers/ctl.ts';
import { tempDir } from '../helpers/tmp.ts';
import { HttpApi } from './http-client.ts';

type Obj = Record<string, unknown>;

describe('tickd ctl and retries', function () {
  this.timeout(60_000);
  let daemon: Daemon;
  let client: LineClient;
  let api: HttpApi;
  let A: string[];
  /** The shell runners succeed for a job once a file named as the job is here. */
  let marks: string;

  before(async () => {
    daemon = await Daemon.start({ config: { http: { listen: '127.0.0.1:0' } } });
    client = await LineClient.connect(daemon.tcp);
    api = new HttpApi(daemon.http!);
    api.useDocument(JSON.parse((await api.request('GET', '/openapi.json')).text));
    A = ['--addr', addrOf(daemon.tcp)];
    marks = tempDir();
  });
  after(async () => {
    client?.close();
    api?.close();
    await daemon?.stop();
  });

  const httpJob = async (id: string): Promise<Obj> => {
    const res = await api.request('GET', `/jobs/${id}`);
    expect(res.status, res.text).to.equal(200);
    return JSON.parse(res.text) as Obj;
  };
  const settled = (id: string): Promise<void> =>
    waitFor(async () => ['executed', 'failed'].includes((await jobStatus(client, id)) ?? ''), 20_000, `${id} executed or failed`);
  const succeedFrom = (id: string): void => writeFileSync(join(marks, id), '');
  const unlessMarked = (): string => `test -e ${marks}/"$TICKD_JOB_ID"`;

  it('rule set takes options: --json is the HTTP rule, --raw the LISTRULES line, the table that of a rule without them', async () => {
    const set = await ctl([...A, '--json', 'rule', 'set', 'o.lim', 'o.', 'retry.attempts=3', 'retry.delay=1s', 'concurrency=2', 'rate.limit=4', 'rate.per=1m', 'shell', 'exit 0']);
    expect(set.code, set.stderr).to.equal(0);
    const http = await api.request('GET', '/rules/o.lim');
    expect(http.status, http.text).to.equal(200);
    expect(JSON.parse(set.stdout)).to.deep.equal(JSON.parse(http.text));
    expect(JSON.parse(set.stdout)).to.deep.include({ concurrency: 2, rate: { limit: 4, per: '1m' } });
    expect((JSON.parse(set.stdout) as Obj)['retry']).to.include({ attempts: 3, delay: '1s' });

    expect((await ctl([...A, 'rule', 'set', 'o.none', 'o.', 'shell', 'exit 0'])).code).to.equal(0);
    const listed = (await client.request('l', 'LISTRULES')).map((l) => l.slice(2)).filter((l) => l.startsWith('o.') || l === 'OK');
    const raw = await ctl([...A, 'rule', 'ls', 'o.', '--raw']);
    expect(raw.stdout).to.equal(`${listed.join('\n')}\n`);
    expect(raw.stdout).to.match(/^o\.lim o\. retry\.attempts=3 .*concurrency=2 .*shell "exit 0"$/m);
    expect((await ctl([...A, 'rule', 'ls', 'o.'])).stdout).to.equal('ID      PATTERN  RUNNER\no.lim   o.       shell "exit 0"\no.none  o.       shell "exit 0"\n');
    const json = JSON.parse((await ctl([...A, 'rule', 'ls', 'o.', '--json'])).stdout) as Obj[];
    expect(json.map((r) => Object.keys(r))).to.deep.equal([['id', 'pattern', 'runner', 'retry', 'concurrency', 'rate'], ['id', 'pattern', 'runner']]);
  });

  it('a bad option is a usage error, nothing sent', async () => {
    const r = await ctl([...A, 'rule', 'set', 'o.bad', 'o.', 'retry.attempts=3', 'shell', 'exit 0']);
    expect(r).to.deep.equal({ code: 2, stdout: '', stderr: 'tickd ctl: retry.delay: is required when attempts is more than 1\n' });
    expect((await api.request('GET', '/rules/o.bad')).status).to.equal(404);
  });

  it('job get shows a job waiting for its next attempt as triggered; job retry refuses it, then runs it afresh once failed', async () => {
    expect((await ctl([...A, 'rule', 'set', 'w', 'w.', 'retry.attempts=2', 'retry.backoff=fixed', 'retry.delay=2s', 'shell', unlessMarked()])).code).to.equal(0);
    expect((await ctl([...A, 'job', 'set', 'w.1', 'now'])).code).to.equal(0);
    await waitFor(async () => (await httpJob('w.1'))['retry_at'] !== undefined, 10_000, 'w.1 waiting for attempt 2');

    const got = await ctl([...A, 'job', 'get', 'w.1', '--json']);
    expect(got.code, got.stderr).to.equal(0);
    const execution0 = BigInt(/"execution":(\d+)/.exec(got.stdout)![1]!);
    expect(JSON.parse(got.stdout)).to.include({ id: 'w.1', status: 'triggered' });
    expect((JSON.parse(got.stdout) as { attempts: Obj[] }).attempts.map((a) => [a['attempt'], a['success'], a['summary']])).to.deep.equal([[1, false, 'exit status 1']]);
    expect(await ctl([...A, 'job', 'retry', 'w.1'])).to.deep.equal({
      code: 1, stdout: '', stderr: 'tickd ctl: invalid_args: job "w.1" is waiting for its next attempt: only a failed job is run again\n',
    });

    await settled('w.1');
    expect(await httpJob('w.1')).to.include({ status: 'failed', attempt: 2 });
    const table = await ctl([...A, 'job', 'get', 'w.1']);
    expect(table.stdout).to.match(/^ID {3}STATUS {2}EXECUTION {23}ATTEMPTS {2}LAST OUTCOME\nw\.1  failed  \S+Z  2 {9}failure: exit status 1\n$/);
    const raw = await ctl([...A, 'job', 'get', 'w.1', '--raw']);
    const listed = (await client.request('a', 'ATTEMPTS w.1')).map((l) => l.slice(2));
    expect(raw.stdout).to.equal(`OK failed ${execution0}\n${listed.join('\n')}\n`);
    expect(listed).to.have.length(3);
    expect(listed[1]).to.match(/^2 \d+ \d+ 0 \d+ failure "exit status 1"$/);
    succeedFrom('w.1');
    const t0 = nowNs();
    const retried = await ctl([...A, 'job', 'retry', 'w.1', '--json']);
    const t1 = nowNs();
    expect(retried.code, retried.stderr).to.equal(0);
    expect(JSON.parse(retried.stdout)).to.include({ id: 'w.1', status: 'planned' });
    const execution = BigInt(/"execution":(\d+)/.exec(retried.stdout)![1]!);
    expect(execution >= t0 && execution <= t1, String(execution)).to.equal(true);

    await settled('w.1');
    expect(await httpJob('w.1')).to.include({ status: 'executed', attempt: 1 });
    const history = await api.request('GET', '/jobs/w.1/attempts');
    const attempts = (JSON.parse(history.text) as { attempts: Obj[] }).attempts;
    expect(attempts.map((a) => [a['attempt'], a['success']])).to.deep.equal([[1, false], [2, false], [1, true]]);
    // job get --json: HTTP's attempts but for what the TCP line does not carry.
    const detail = JSON.parse((await ctl([...A, 'job', 'get', 'w.1', '--json'])).stdout) as { attempts: Obj[] };
    expect(detail.attempts).to.deep.equal(attempts.map(({ rule: _r, runner: _k, outcome: _o, ...rest }) => rest));
    expect(await ctl([...A, 'job', 'retry', 'w.1'])).to.deep.equal({
      code: 1, stdout: '', stderr: 'tickd ctl: invalid_args: job "w.1" is executed: only a failed job is run again\n',
    });
  });

  it('job retry: the table and --raw outputs, a missing job, a bad identifier', async () => {
    expect((await ctl([...A, 'rule', 'set', 'f', 'f.', 'shell', unlessMarked()])).code).to.equal(0);
    for (const id of ['f.table', 'f.raw']) expect(await client.request('s', `SET ${id} ${nowNs()}`)).to.deep.equal(['s OK']);
    await settled('f.table');
    await settled('f.raw');
    expect(await jobStatus(client, 'f.table')).to.equal('failed');

    const table = await ctl([...A, 'job', 'retry', 'f.table']);
    expect(table.code, table.stderr).to.equal(0);
    expect(table.stdout).to.match(/^ID {7}STATUS {3}EXECUTION\nf\.table  planned  \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z\n$/);
    const raw = await ctl([...A, 'job', 'retry', 'f.raw', '--raw']);
    expect(raw.code, raw.stderr).to.equal(0);
    expect(raw.stdout).to.match(/^OK planned \d+\n$/);
    // Both ran again, from attempt 1, and failed again: no file for them.
    const attemptsOf = async (id: string): Promise<Obj[]> => (JSON.parse((await api.request('GET', `/jobs/${id}/attempts`)).text) as { attempts: Obj[] }).attempts;
    for (const id of ['f.table', 'f.raw']) {
      await waitFor(async () => (await attemptsOf(id)).length === 2 && (await jobStatus(client, id)) === 'failed', 20_000, `${id} failed again`);
      expect((await attemptsOf(id)).map((a) => [a['attempt'], a['success']])).to.deep.equal([[1, false], [1, false]]);
    }

    expect(await ctl([...A, 'job', 'retry', 'f.none'])).to.deep.equal({ code: 1, stdout: '', stderr: 'tickd ctl: not_found: job "f.none" does not exist\n' });
    const bad = await ctl([...A, 'job', 'retry', 'f none']);
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.match(/^tickd ctl: job identifier contains invalid character space/);
  });
});
