// OpenTelemetry export (tickd.toml(5) [telemetry]) against a local OTLP/HTTP collector
// (test/helpers/otlp-receiver.ts): what the real daemon exports from both process roles,
// that a stuck collector never slows replies or firing, that shutdown flushes within a
// bound, and that a daemon without telemetry loads no OpenTelemetry module.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Daemon } from '../helpers/daemon.ts';
import { jobStatus, LineClient, nowNs, waitFor } from '../helpers/client.ts';
import { OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.ts';
import { tempDir } from '../helpers/tmp.ts';
import { silentLogger } from '../../lib/log.ts';
import { VERSION } from '../../lib/version.ts';
import { EXECUTION_METRIC_NAMES, METRIC_NAMES, TICK_METRIC_NAMES } from '../../lib/telemetry/instruments.ts';
import { MAX_QUEUE } from '../../lib/telemetry/bounded.ts';

const SERVER = 2; // OTLP SpanKind SPAN_KIND_SERVER
const REPO = fileURLToPath(new URL('../../', import.meta.url));

function telemetryConfig(endpoint: string, extra: Record<string, unknown> = {}) {
  return { telemetry: { enabled: true, endpoint, flush_interval_ms: 200, ...extra } };
}

async function authed(daemon: Daemon): Promise<LineClient> {
  const c = await LineClient.connect(daemon.tcp);
  c.write('AUTH secret-admin\n');
  expect(await c.readLine()).to.equal('OK');
  return c;
}

const spanOf = (rx: OtlpReceiver, rid: string, command: string) => () =>
  rx.spans.find((s) => s.attributes['tickd.request.id'] === rid && s.attributes['tickd.command'] === command);

describe('telemetry', function () {
  this.timeout(60_000);

  describe('daemon exporting to a collector', () => {
    let rx: OtlpReceiver;
    let daemon: Daemon;
    let c: LineClient;

    before(async () => {
      rx = await OtlpReceiver.start('ok');
      const dir = tempDir();
      writeFileSync(join(dir, 'tokens.toml'), '[token.admin]\nsecret = "secret-admin"\nnamespace = "*"\n');
      daemon = await Daemon.start({ dir, config: { controller: { auth_file: join(dir, 'tokens.toml') }, ...telemetryConfig(rx.url) } });
      c = await authed(daemon);
    });
    after(async () => {
      c?.close();
      await daemon?.stop();
      await rx?.close();
    });

    it('exports the seven tickd metrics of the spec, the two of executions and the tick\'s turns from the primary, with kinds, units and the outcome attribute', async () => {
      await c.request('1', 'RULE SET tm. tm. direct /bin/true');
      await c.request('2', `SET tm.job ${nowNs()}`);
      await waitFor(async () => (await jobStatus(c, 'tm.job')) === 'executed', 10_000, 'tm.job executed');
      await c.request('3', `SET tm.later ${nowNs() + 3_600_000_000_000n}`);
      expect(await c.request('4', 'REMOVE tm.later')).to.deep.equal(['4 OK']);
      const latest = (name: string) => rx.metrics.filter((m) => m.name === name).at(-1);
      await rx.waitFor(() => ([...METRIC_NAMES, ...EXECUTION_METRIC_NAMES, ...TICK_METRIC_NAMES].every((n) => rx.metricNames().has(n))
        && (latest('tickd.jobs.removed')?.dataPoints[0]?.value ?? 0) >= 1
        && latest('tickd.jobs.executed')?.dataPoints.some((p) => p.attributes['tickd.outcome'] === 'executed') ? true : undefined), 10_000, 'all metrics');
      expect([...rx.metricNames()].filter((n) => n.startsWith('tickd.')).sort()).to.deep.equal([...METRIC_NAMES, ...EXECUTION_METRIC_NAMES, ...TICK_METRIC_NAMES].sort());
      const shape = (name: string) => { const m = latest(name)!; return [m.type, m.monotonic ?? null, m.unit]; };
      expect(shape('tickd.jobs.scheduled')).to.deep.equal(['sum', true, '{job}']);
      expect(shape('tickd.jobs.executed')).to.deep.equal(['sum', true, '{job}']);
      expect(shape('tickd.jobs.removed')).to.deep.equal(['sum', true, '{job}']);
      expect(shape('tickd.execution.duration_ms')).to.deep.equal(['histogram', null, 'ms']);
      expect(shape('tickd.connections.active')).to.deep.equal(['gauge', null, '{connection}']);
      expect(shape('tickd.rules.active')).to.deep.equal(['gauge', null, '{rule}']);
      expect(shape('tickd.persistence.compactions')).to.deep.equal(['sum', true, '{compaction}']);
      expect(shape('tickd.tick.turn_ms')).to.deep.equal(['histogram', null, 'ms']);
      expect(shape('tickd.execution.lateness_ms')).to.deep.equal(['histogram', null, 'ms']);
      expect(shape('tickd.execution.outcomes')).to.deep.equal(['sum', true, '{execution}']);
      expect(latest('tickd.execution.outcomes')!.dataPoints.map((p) => p.attributes))
        .to.deep.include({ 'tickd.runner.kind': 'direct', 'tickd.runner.outcome': 'exit', 'tickd.outcome': 'executed' });
      expect(latest('tickd.jobs.scheduled')!.dataPoints[0]!.value).to.be.at.least(2);
      expect(latest('tickd.rules.active')!.dataPoints[0]!.value).to.be.at.least(1);
      const durations = latest('tickd.execution.duration_ms')!.dataPoints.find((p) => p.attributes['tickd.outcome'] === 'executed');
      expect(durations?.count).to.be.at.least(1);
    });

    it('exports one SERVER span tickd.request per TCP request, from the worker, with its attributes', async () => {
      await c.request('st1', 'STAT');
      await c.request('nf1', 'GET no.such.job');
      const ok = await rx.waitFor(spanOf(rx, 'st1', 'STAT'), 10_000, 'STAT span');
      const failed = await rx.waitFor(spanOf(rx, 'nf1', 'GET'), 10_000, 'GET span');
      expect(ok.name).to.equal('tickd.request');
      expect(ok.kind).to.equal(SERVER);
      expect(ok.attributes).to.deep.equal({ 'tickd.command': 'STAT', 'tickd.request.id': 'st1', 'tickd.success': true });
      expect(failed.attributes['tickd.success']).to.equal(false);
      expect(ok.endNs >= ok.startNs).to.equal(true);
      const wall = nowNs();
      expect(ok.startNs > wall - 60_000_000_000n && ok.startNs <= wall, 'start time is epoch time').to.equal(true);
      expect(rx.spans.filter((s) => s.attributes['tickd.request.id'] === 'st1')).to.have.length(1);
    });

    it('exports a warning with the trace id of its request span (failed AUTH, no secret in it)', async () => {
      const intruder = await LineClient.connect(daemon.tcp);
      intruder.write('AUTH not-the-secret\n');
      await intruder.waitClosed();
      const log = await rx.waitFor(() => rx.logs.find((l) => l.body === 'authentication failed'), 10_000, 'auth warning');
      expect(log.severityNumber).to.equal(13);
      expect(log.severityText).to.equal('WARN');
      const span: ReceivedSpan = await rx.waitFor(() => rx.spans.find((s) => s.traceId === log.traceId), 10_000, 'the AUTH span');
      expect(log.traceId).to.match(/^[0-9a-f]{32}$/);
      expect(log.spanId).to.equal(span.spanId);
      expect(span.attributes).to.include({ 'tickd.command': 'AUTH', 'tickd.success': false });
      expect(JSON.stringify(log)).to.not.contain('not-the-secret');
    });

    it('every signal carries service.name and service.version', async () => {
      await rx.waitFor(() => (rx.spans.length > 0 && rx.metrics.length > 0 && rx.logs.length > 0 ? true : undefined));
      for (const item of [...rx.spans, ...rx.metrics, ...rx.logs]) {
        expect(item.resource).to.include({ 'service.name': 'tickd', 'service.version': VERSION });
      }
      expect(rx.errors).to.deep.equal([]);
      expect(new Set(rx.requests.map((r) => r.contentType))).to.deep.equal(new Set(['application/json']));
    });
  });

  describe('a collector that accepts connections and never answers', () => {
    let rx: OtlpReceiver;
    let daemon: Daemon;
    let c: LineClient;

    before(async () => {
      rx = await OtlpReceiver.start('hang');
      daemon = await Daemon.start({ config: telemetryConfig(rx.url, { service_name: 'tickd-under-test' }) });
      c = await LineClient.connect(daemon.tcp);
      // Exports are pending on the stuck collector from here on.
      await c.request('w', 'STAT');
      await rx.waitFor(() => (rx.requests.some((r) => r.path === '/v1/traces') && rx.requests.some((r) => r.path === '/v1/metrics') ? true : undefined), 10_000, 'exports attempted');
    });
    after(async () => {
      c?.close();
      await daemon?.kill();
      await rx?.close();
    });

    it('does not slow command replies', async () => {
      let slowest = 0;
      for (let i = 0; i < 30; i++) {
        const started = performance.now();
        const lines = await c.request(`s${i}`, 'STAT');
        slowest = Math.max(slowest, performance.now() - started);
        expect(lines.at(-1)).to.equal(`s${i} OK`);
      }
      expect(slowest, 'slowest STAT reply, ms').to.be.below(1000);
    });

    it('does not delay a job due now', async () => {
      await c.request('1', 'RULE SET hg. hg. direct /bin/true');
      const started = performance.now();
      await c.request('2', `SET hg.job ${nowNs()}`);
      await waitFor(async () => (await jobStatus(c, 'hg.job')) === 'executed', 1000, 'hg.job executed within 1 s');
      expect(performance.now() - started).to.be.below(1000);
    });

    it('names the service as configured (seen in the unanswered requests)', async () => {
      await rx.waitFor(spanOf(rx, 's0', 'STAT'), 10_000, 'a STAT span');
      expect(rx.spans[0]!.resource['service.name']).to.equal('tickd-under-test');
    });

    it('stops within a bounded time with exports still pending', async () => {
      const started = performance.now();
      const { code } = await daemon.stop();
      expect(code).to.equal(0);
      expect(performance.now() - started, 'ms to stop').to.be.below(8000);
    });
  });

  describe('graceful shutdown', () => {
    it('flushes what is pending before exiting', async () => {
      const rx = await OtlpReceiver.start('ok');
      try {
        // An interval far longer than the test: only the shutdown flush can deliver.
        const daemon = await Daemon.start({ config: telemetryConfig(rx.url, { flush_interval_ms: 600_000 }) });
        const c = await LineClient.connect(daemon.tcp);
        await c.request('last', 'STAT');
        await c.request('j', `SET later.job ${nowNs() + 3_600_000_000_000n}`);
        c.close();
        expect(rx.requests, 'nothing exported before shutdown').to.deep.equal([]);
        expect((await daemon.stop()).code).to.equal(0);
        expect(spanOf(rx, 'last', 'STAT')(), 'the span of the last request').to.not.equal(undefined);
        expect(rx.metrics.find((m) => m.name === 'tickd.jobs.scheduled')?.dataPoints[0]?.value).to.equal(1);
      } finally {
        await rx.close();
      }
    });
  });

  describe('in process', () => {
    it('keeps the span queue bounded and counts the drops while the collector hangs', async () => {
      const rx = await OtlpReceiver.start('hang');
      const { startTelemetry } = await import('../../lib/telemetry/otel.ts');
      const telemetry = startTelemetry({ endpoint: rx.url, serviceName: 'tickd', serviceVersion: VERSION, flushIntervalMs: 50, metrics: false, log: silentLogger() });
      try {
        const started = performance.now();
        for (let i = 0; i < 3 * MAX_QUEUE; i++) telemetry.requestSpan({ rid: String(i), instruction: 'STAT', startedNs: process.hrtime.bigint(), success: true });
        expect(performance.now() - started, 'recording is synchronous and cheap').to.be.below(1000);
        expect(telemetry.ledger.waiting('traces')).to.be.at.most(MAX_QUEUE);
        expect(telemetry.ledger.counts.traces.dropped).to.be.at.least(MAX_QUEUE);
        const stopping = performance.now();
        await telemetry.shutdown(300);
        expect(performance.now() - stopping, 'shutdown bounded by its timeout').to.be.below(1000);
      } finally {
        await rx.close();
      }
    });

    for (const collector of ['down', 'answering 500'] as const) {
      it(`counts failed exports when the collector is ${collector}, and still stops in time`, async () => {
        const rx = await OtlpReceiver.start(500);
        if (collector === 'down') await rx.close(); // nothing listens on that port any more
        const { startTelemetry } = await import('../../lib/telemetry/otel.ts');
        const telemetry = startTelemetry({ endpoint: rx.url, serviceName: 'tickd', serviceVersion: VERSION, flushIntervalMs: 50, metrics: true, log: silentLogger() });
        try {
          telemetry.instruments({ connections: () => 1, rules: () => 1, compactions: () => 0 }).scheduled();
          telemetry.requestSpan({ rid: 'r', instruction: 'STAT', startedNs: process.hrtime.bigint(), success: true });
          telemetry.otelLogger.emit({ body: 'warning' });
          const counts = telemetry.ledger.counts;
          await waitFor(() => counts.traces.failed >= 1 && counts.logs.failed >= 1 && counts.metrics.failed >= 1, 10_000, 'failures counted');
          expect(counts.traces.exported + counts.logs.exported + counts.metrics.exported).to.equal(0);
          const stopping = performance.now();
          await telemetry.shutdown(500);
          expect(performance.now() - stopping).to.be.below(1500);
        } finally {
          if (collector !== 'down') await rx.close();
        }
      });
    }
  });

  describe('disabled', () => {
    const loadedOtel = (modules: string[]): string[] => {
      const script = `
        import { createRequire } from 'node:module';
        for (const m of ${JSON.stringify(modules)}) await import(m);
        const cache = Object.keys(createRequire(import.meta.url).cache);
        console.log(JSON.stringify(cache.filter((k) => k.includes('@opentelemetry'))));`;
      const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: REPO, encoding: 'utf8', timeout: 30_000 });
      expect(run.status, run.stderr).to.equal(0);
      return JSON.parse(run.stdout.trim().split('\n').at(-1)!) as string[];
    };

    // With the HTTP interface on, the primary loads the metrics SDK for GET /metrics (loadPrimaryMeters).
    it('loads no OpenTelemetry module unless telemetry or the HTTP interface is enabled', () => {
      expect(loadedOtel(['./cluster/primary.ts', './cluster/shutdown.ts', './lib/telemetry/wiring.ts', './lib/telemetry/instruments.ts'])).to.deep.equal([]);
      // The control: the detector does see a loaded SDK.
      expect(loadedOtel(['./lib/telemetry/otel.ts'])).to.not.deep.equal([]);
    });
  });
});
