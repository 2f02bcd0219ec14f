// What the real daemon tells about executions (doc/execution.md "The attempt record";
// tickd-protocol(7) HTTP INTERFACE): GET /jobs/{id}'s last_attempt for each runner outcome, the
// TCP GET line left as the spec has it, the one warning of a failed job at the default log
// level, GET /metrics (the Prometheus text of the OpenTelemetry instruments, the same values as
// OTLP export) and GET /activity. Every HTTP response is checked against the served document.
import { expect } from 'chai';
import { createServer, type AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Daemon } from '../helpers/daemon.ts';
import { LineClient, nowNs, waitFor } from '../helpers/client.ts';
import { OtlpReceiver } from '../helpers/otlp-receiver.ts';
import { tempDir } from '../helpers/tmp.ts';
import { HttpApi } from './http-client.ts';

type Obj = Record<string, unknown>;

/** A loopback port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The value of one sample line of a Prometheus text, by its name and label subset; 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (m === null || m[1] !== name) continue;
    const have = new Map([...(m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1]!, l[2]!]));
    if (Object.entries(labels).every(([k, v]) => have.get(k) === v)) return Number(m[3]);
  }
  return 0;
}

async function documented(api: HttpApi): Promise<void> {
  const res = await api.request('GET', '/openapi.json');
  api.useDocument(JSON.parse(res.text));
}

describe('attempt records, failure warnings, /metrics and /activity', function () {
  this.timeout(60_000);
  let daemon: Daemon;
  let api: HttpApi;
  let tcp: LineClient;

  before(async () => {
    daemon = await Daemon.start({ workers: 2, config: { http: { listen: '127.0.0.1:0' } } });
    api = new HttpApi(daemon.http!);
    tcp = await LineClient.connect(daemon.tcp);
    await documented(api);
  });
  after(async () => {
    tcp?.close();
    api?.close();
    await daemon?.stop();
  });

  const job = async (id: string): Promise<{ body: Obj; text: string }> => {
    const res = await api.request('GET', `/jobs/${id}`);
    expect(res.status).to.equal(200);
    return { body: JSON.parse(res.text) as Obj, text: res.text };
  };
  const settled = async (id: string): Promise<Obj> => {
    await waitFor(async () => ['executed', 'failed'].includes((await job(id)).body['status'] as string), 10_000, `${id} done`);
    return (await job(id)).body;
  };
  const warning = (id: string) => daemon.waitForLog((r) => r['msg'] === 'job failed' && r['job'] === id);

  it('a shell job exiting 3: exit status, stderr tail, lateness and duration; the TCP GET line is the spec\'s', async () => {
    expect(await tcp.request('r1', 'RULE SET sh. sh. shell "echo to-stdout; echo \\"disk full on /srv\\" >&2; sleep 0.05; exit 3"')).to.deep.equal(['r1 OK']);
    const execution = nowNs();
    expect(await tcp.request('s1', `SET sh.fail ${execution}`)).to.deep.equal(['s1 OK']);
    const body = await settled('sh.fail');
    expect(body).to.include({ id: 'sh.fail', status: 'failed' });
    const a = body['last_attempt'] as Obj;
    expect(a).to.include({ rule: 'sh.', runner: 'shell', success: false, summary: 'exit status 3' });
    expect(a['outcome']).to.deep.equal({ kind: 'exit', status: 3, stderr: 'disk full on /srv\n' });
    const { text } = await job('sh.fail');
    const ns = (field: string) => BigInt(new RegExp(`"${field}":(-?\\d+)`).exec(text)![1]!);
    expect(ns('lateness_ns') >= 0n && ns('lateness_ns') < 5_000_000_000n, 'lateness').to.equal(true);
    expect(ns('started_ns')).to.equal(execution + ns('lateness_ns'));
    expect(ns('duration_ns') >= 50_000_000n && ns('duration_ns') < 10_000_000_000n, 'duration: the 50 ms sleep and more').to.equal(true);
    // TCP: exactly `<rid> OK <status> <ns>`, nothing of the attempt.
    expect(await tcp.request('g1', 'GET sh.fail')).to.deep.equal([`g1 OK failed ${execution}`]);
  });

  it('logs one warning per failed job at the default level: job, rule, runner, outcome', async () => {
    const rec = await warning('sh.fail');
    expect(rec).to.include({ level: 40, job: 'sh.fail', rule: 'sh.', runner: 'shell', outcome: 'exit status 3', component: 'scheduler' });
    expect(daemon.stderr.filter((l) => l.includes('"job failed"') && l.includes('"sh.fail"'))).to.have.length(1);
    expect(daemon.stderr.join('\n')).to.not.include('disk full'); // the stderr tail is not logged at info
  });

  it('an http job to a closed port: the network error, and no password anywhere', async () => {
    const port = await closedPort();
    expect(await tcp.request('r2', `RULE SET web. web. http POST http://hook:pa55w0rd-xyz@127.0.0.1:${port}/hook`)).to.deep.equal(['r2 OK']);
    expect(await tcp.request('s2', `SET web.down ${nowNs()}`)).to.deep.equal(['s2 OK']);
    const a = (await settled('web.down'))['last_attempt'] as Obj;
    expect(a).to.include({ rule: 'web.', runner: 'http', success: false });
    expect(a['outcome']).to.deep.equal({ kind: 'network_error', error: `connect ECONNREFUSED 127.0.0.1:${port}` });
    expect(a['summary']).to.equal(`network error: connect ECONNREFUSED 127.0.0.1:${port}`);
    const rec = await warning('web.down');
    expect(rec).to.include({ level: 40, rule: 'web.', runner: 'http', outcome: `network error: connect ECONNREFUSED 127.0.0.1:${port}` });
    expect(daemon.stderr.join('\n')).to.not.include('pa55w0rd-xyz');
    expect(JSON.stringify(a)).to.not.include('pa55w0rd-xyz');
  });

  it('a job no rule matches: "no matching rule", recorded when it fired', async () => {
    const execution = nowNs();
    expect(await tcp.request('s3', `SET orphan.1 ${execution}`)).to.deep.equal(['s3 OK']);
    const a = (await settled('orphan.1'))['last_attempt'] as Obj;
    expect(a).to.deep.include({ rule: null, runner: null, success: false, summary: 'no matching rule', outcome: { kind: 'no_rule' }, duration_ns: 0 });
    expect(await warning('orphan.1')).to.include({ rule: null, runner: null, outcome: 'no matching rule' });
  });

  it('a job that succeeds: exit status 0, no warning; a job not run yet has no record, nor one set again after REMOVE', async () => {
    expect(await tcp.request('r4', 'RULE SET ok. ok. direct /bin/true')).to.deep.equal(['r4 OK']);
    expect(await tcp.request('s4', `SET ok.1 ${nowNs()}`)).to.deep.equal(['s4 OK']);
    const done = await settled('ok.1');
    expect(done['status']).to.equal('executed');
    expect(done['last_attempt']).to.deep.include({ success: true, summary: 'exit status 0', outcome: { kind: 'exit', status: 0, stderr: '' } });
    expect(daemon.stderr.some((l) => l.includes('"job failed"') && l.includes('"ok.1"'))).to.equal(false);
    expect(await tcp.request('s5', `SET ok.later ${nowNs() + 3_600_000_000_000n}`)).to.deep.equal(['s5 OK']);
    expect((await job('ok.later')).body).to.not.have.property('last_attempt');
    expect(await tcp.request('d4', 'REMOVE ok.1')).to.deep.equal(['d4 OK']);
    expect(await tcp.request('s6', `SET ok.1 ${nowNs() + 3_600_000_000_000n}`)).to.deep.equal(['s6 OK']);
    expect((await job('ok.1')).body).to.not.have.property('last_attempt');
  });

  it('GET /metrics: Prometheus text with the lateness histogram and the outcome counters by runner kind, counting every execution', async () => {
    const scrape = async (): Promise<string> => {
      const res = await api.request('GET', '/metrics');
      expect(res.status).to.equal(200);
      expect(res.headers['content-type']).to.equal('text/plain; version=0.0.4; charset=utf-8');
      return res.text;
    };
    const shellFailed = { tickd_runner_kind: 'shell', tickd_runner_outcome: 'exit', tickd_outcome: 'failed' };
    const directOk = { tickd_runner_kind: 'direct', tickd_runner_outcome: 'exit', tickd_outcome: 'executed' };
    const before = await scrape();
    expect(before).to.include('# TYPE tickd_execution_lateness_ms histogram');
    expect(before).to.include('# TYPE tickd_execution_outcomes_total counter');
    expect(sample(before, 'tickd_execution_outcomes_total', shellFailed)).to.equal(1);
    expect(sample(before, 'tickd_execution_outcomes_total', { tickd_runner_kind: 'http', tickd_runner_outcome: 'network_error', tickd_outcome: 'failed' })).to.equal(1);
    expect(sample(before, 'tickd_execution_outcomes_total', { tickd_runner_kind: 'none', tickd_runner_outcome: 'no_rule', tickd_outcome: 'failed' })).to.equal(1);

    const n = 5;
    const at = nowNs();
    for (let i = 0; i < n; i++) expect(await tcp.request(`m${i}`, `SET ok.m${i} ${at}`)).to.deep.equal([`m${i} OK`]);
    for (let i = 0; i < n; i++) await settled(`ok.m${i}`);
    const after = await scrape();
    expect(sample(after, 'tickd_execution_outcomes_total', directOk) - sample(before, 'tickd_execution_outcomes_total', directOk)).to.equal(n);
    expect(sample(after, 'tickd_execution_outcomes_total', shellFailed)).to.equal(1);
    const count = (t: string) => sample(t, 'tickd_execution_lateness_ms_count');
    expect(count(after) - count(before)).to.equal(n);
    // Every execution (and the no-rule job) has one lateness sample; the +Inf bucket holds them all.
    expect(sample(after, 'tickd_execution_lateness_ms_bucket', { le: '+Inf' })).to.equal(count(after));
    expect(count(after)).to.equal(n + 4); // sh.fail, web.down, orphan.1, ok.1
    expect(sample(after, 'tickd_jobs_executed_total', { tickd_outcome: 'executed' })).to.equal(n + 1);
  });

  it('GET /activity: per-second fired, executed and failed of the last five minutes', async () => {
    const res = await api.request('GET', '/activity');
    expect(res.status).to.equal(200);
    const view = JSON.parse(res.text) as { interval_ms: number; buckets: Array<Record<string, number | null>> };
    expect(view.interval_ms).to.equal(1000);
    expect(view.buckets).to.have.length(300);
    const last = view.buckets.at(-1)!;
    expect(Date.now() - (last['at_ms'] as number)).to.be.within(0, 2000);
    const total = (k: string) => view.buckets.reduce((s, b) => s + (b[k] as number), 0);
    expect([total('fired'), total('executed'), total('failed')]).to.deep.equal([9, 6, 3]);
    // Lateness belongs to the second a runner started, which can be the one after the second
    // its job fired: each second with a job fired has lateness in it or in the next one.
    view.buckets.forEach((b, i) => {
      if ((b['fired'] as number) === 0) return;
      const withLateness = [b, view.buckets[i + 1]].filter((x) => x !== undefined && x['lateness_max_ms'] !== null);
      expect(withLateness.length, `lateness in the second of bucket ${i} or the next`).to.be.above(0);
    });
    for (const b of view.buckets.filter((x) => x['lateness_max_ms'] !== null)) {
      expect(b['lateness_max_ms']).to.be.a('number').and.at.least(0);
      expect(b['lateness_p50_ms']).to.be.a('number').and.at.most(b['lateness_max_ms'] as number);
    }
    expect(api.checked).to.be.above(10);
  });
});

describe('/metrics beside OTLP export: the same values', function () {
  this.timeout(60_000);

  it('shows what the collector received last, with OTLP export on', async () => {
    const rx = await OtlpReceiver.start('ok');
    const dir = tempDir();
    writeFileSync(join(dir, 'tokens.toml'), '[token.admin]\nsecret = "secret-admin"\nnamespace = "*"\n[token.narrow]\nsecret = "secret-narrow"\nnamespace = "other."\n');
    const daemon = await Daemon.start({
      dir,
      config: {
        http: { listen: '127.0.0.1:0' },
        controller: { auth_file: join(dir, 'tokens.toml') },
        telemetry: { enabled: true, endpoint: rx.url, flush_interval_ms: 200 },
      },
    });
    const api = new HttpApi(daemon.http!, 'secret-admin');
    const tcp = await LineClient.connect(daemon.tcp);
    try {
      tcp.write('AUTH secret-admin\n');
      expect(await tcp.readLine()).to.equal('OK');
      await tcp.request('r', 'RULE SET x. x. shell "exit 2"');
      for (let i = 0; i < 3; i++) await tcp.request(`s${i}`, `SET x.${i} ${nowNs()}`);
      const otlp = (): number | undefined => {
        const last = rx.metrics.filter((m) => m.name === 'tickd.execution.outcomes').at(-1);
        return last?.dataPoints.find((p) => p.attributes['tickd.runner.kind'] === 'shell')?.value;
      };
      await rx.waitFor(() => (otlp() === 3 ? true : undefined), 15_000, 'three failures exported');
      const res = await api.request('GET', '/metrics');
      expect(sample(res.text, 'tickd_execution_outcomes_total', { tickd_runner_kind: 'shell', tickd_runner_outcome: 'exit', tickd_outcome: 'failed' })).to.equal(otlp());
      const lateness = rx.metrics.filter((m) => m.name === 'tickd.execution.lateness_ms').at(-1)!;
      expect(sample(res.text, 'tickd_execution_lateness_ms_count')).to.equal(lateness.dataPoints[0]!.count);
      // Authenticated like /stats: any token may read it; none may not.
      expect((await api.request('GET', '/metrics', { token: 'secret-narrow' })).status).to.equal(200);
      expect((await api.request('GET', '/activity', { token: 'secret-narrow' })).status).to.equal(200);
      expect((await api.request('GET', '/metrics', { token: null })).status).to.equal(401);
    } finally {
      tcp.close();
      api.close();
      await daemon.stop();
      await rx.close();
    }
  });
});
