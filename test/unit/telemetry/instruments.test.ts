import { expect } from 'chai';
import { DataPointType, MeterProvider, MetricReader, type MetricData } from '@opentelemetry/sdk-metrics';
import { CLUSTER_METRIC_NAMES, PLACEMENT_METRIC_NAMES, createInstruments, EXECUTION_METRIC_NAMES, METRIC_NAMES, SCHEDULE_METRIC_NAMES, TICK_METRIC_NAMES } from '../../../lib/telemetry/instruments.ts';
import { engineObserver } from '../../../lib/engine/observers.ts';
import { startMetricsOnly } from '../../../lib/telemetry/metrics.ts';
import { silentLogger } from '../../../lib/log.ts';

class TestReader extends MetricReader {
  protected onShutdown(): Promise<void> { return Promise.resolve(); }
  protected onForceFlush(): Promise<void> { return Promise.resolve(); }
}

async function collect(reader: TestReader): Promise<Map<string, MetricData>> {
  const { resourceMetrics } = await reader.collect();
  const out = new Map<string, MetricData>();
  for (const scope of resourceMetrics.scopeMetrics) for (const m of scope.metrics) out.set(m.descriptor.name, m);
  return out;
}

function points(m: MetricData | undefined): Array<[string | undefined, unknown]> {
  return (m?.dataPoints ?? []).map((p) => [p.attributes['tickd.outcome'] as string | undefined, p.value]);
}

describe('telemetry/instruments', () => {
  it('exposes exactly the seven tickd metrics with their kinds and units', async () => {
    const reader = new TestReader();
    const provider = new MeterProvider({ readers: [reader] });
    const m = createInstruments(provider.getMeter('t'), { connections: () => 4, rules: () => 2, compactions: () => 1 });
    m.scheduled();
    m.removed();
    m.executed(true, 12);
    m.notRunnable();
    const got = await collect(reader);
    expect([...got.keys()].sort()).to.deep.equal([...METRIC_NAMES].sort());
    const kind = (name: string): [string, string] => {
      const data = got.get(name)!;
      const type = data.dataPointType === DataPointType.SUM ? (data.isMonotonic ? 'monotonic sum' : 'sum')
        : data.dataPointType === DataPointType.GAUGE ? 'gauge' : data.dataPointType === DataPointType.HISTOGRAM ? 'histogram' : 'other';
      return [type, data.descriptor.unit];
    };
    expect(kind('tickd.jobs.scheduled')).to.deep.equal(['monotonic sum', '{job}']);
    expect(kind('tickd.jobs.executed')).to.deep.equal(['monotonic sum', '{job}']);
    expect(kind('tickd.jobs.removed')).to.deep.equal(['monotonic sum', '{job}']);
    expect(kind('tickd.execution.duration_ms')).to.deep.equal(['histogram', 'ms']);
    expect(kind('tickd.connections.active')).to.deep.equal(['gauge', '{connection}']);
    expect(kind('tickd.rules.active')).to.deep.equal(['gauge', '{rule}']);
    expect(kind('tickd.persistence.compactions')).to.deep.equal(['monotonic sum', '{compaction}']);
    expect(points(got.get('tickd.connections.active'))).to.deep.equal([[undefined, 4]]);
    await provider.shutdown();
  });

  it('counts executions by outcome and records durations', async () => {
    const reader = new TestReader();
    const provider = new MeterProvider({ readers: [reader] });
    const m = createInstruments(provider.getMeter('t'), { connections: () => 0, rules: () => 0, compactions: () => 0 });
    m.executed(true, 10);
    m.executed(true, 30);
    m.executed(false, 5);
    m.executed(false, Number.NaN); // counted, but no nonsense duration
    const got = await collect(reader);
    expect(points(got.get('tickd.jobs.executed')).sort()).to.deep.equal([['executed', 2], ['failed', 2]]);
    const hist = got.get('tickd.execution.duration_ms')!.dataPoints.map((p) => [p.attributes['tickd.outcome'], (p.value as { count: number; sum: number }).count, (p.value as { sum: number }).sum]);
    expect(hist.sort()).to.deep.equal([['executed', 2, 40], ['failed', 1, 5]]);
    await provider.shutdown();
  });

  it('feeds scheduled/removed from successful engine commands only', async () => {
    const reader = new TestReader();
    const provider = new MeterProvider({ readers: [reader] });
    const observer = engineObserver(createInstruments(provider.getMeter('t'), { connections: () => 0, rules: () => 0, compactions: () => 0 }));
    observer.commandApplied({ op: 'job.set', id: 'a', execution: 1n }, { ok: true, kind: 'done' });
    observer.commandApplied({ op: 'job.set', id: 'b', execution: 1n }, { ok: false, code: 'invalid_args', message: 'x' } as never);
    observer.commandApplied({ op: 'job.remove', id: 'a' }, { ok: true, kind: 'done' });
    observer.commandApplied({ op: 'stat' }, { ok: true, kind: 'done' });
    observer.fired({ id: 'c', execution: 1n, status: 'failed' }, 'no-rule', 2n);
    observer.fired({ id: 'd', execution: 1n, status: 'triggered' }, 'triggered', 2n);
    const got = await collect(reader);
    expect(points(got.get('tickd.jobs.scheduled'))).to.deep.equal([[undefined, 1]]);
    expect(points(got.get('tickd.jobs.removed'))).to.deep.equal([[undefined, 1]]);
    expect(points(got.get('tickd.jobs.executed'))).to.deep.equal([['failed', 1]]);
    await provider.shutdown();
  });

  describe('cluster mode', () => {
    it('reports the role (1 leader, 0 follower, nothing while undecided) and counts takeovers and quarantined messages', async () => {
      const reader = new TestReader();
      const provider = new MeterProvider({ readers: [reader] });
      let role: 'leader' | 'follower' | null = null;
      const m = createInstruments(provider.getMeter('t'), { connections: () => 0, rules: () => 0, compactions: () => 0, role: () => role });
      expect((await collect(reader)).has('tickd.cluster.role'), 'undecided').to.equal(false);
      role = 'follower';
      let got = await collect(reader);
      expect(points(got.get('tickd.cluster.role'))).to.deep.equal([[undefined, 0]]);
      expect([got.get('tickd.cluster.role')!.dataPointType, got.get('tickd.cluster.role')!.descriptor.unit]).to.deep.equal([DataPointType.GAUGE, '1']);
      role = 'leader';
      m.tookOver();
      m.tookOver();
      m.quarantined();
      got = await collect(reader);
      expect(points(got.get('tickd.cluster.role'))).to.deep.equal([[undefined, 1]]);
      const failovers = got.get('tickd.cluster.failovers')!;
      expect([failovers.dataPointType, failovers.dataPointType === DataPointType.SUM && failovers.isMonotonic, failovers.descriptor.unit]).to.deep.equal([DataPointType.SUM, true, '{failover}']);
      expect(points(failovers)).to.deep.equal([[undefined, 2]]);
      expect(points(got.get('tickd.cluster.quarantined')!)).to.deep.equal([[undefined, 1]]);
      expect([...got.keys()].filter((n) => n.startsWith('tickd.cluster.')).sort()).to.deep.equal([...CLUSTER_METRIC_NAMES].sort());
      await provider.shutdown();
    });

    it('exports the placement gauges in cluster mode: executions running here, and waiting for a node', async () => {
      const reader = new TestReader();
      const provider = new MeterProvider({ readers: [reader] });
      let now = { running: 3, waiting: 0 };
      createInstruments(provider.getMeter('t'), { connections: () => 0, rules: () => 0, compactions: () => 0, role: () => 'leader', placement: () => now });
      let got = await collect(reader);
      expect(points(got.get('tickd.placement.running')!)).to.deep.equal([[undefined, 3]]);
      expect(points(got.get('tickd.placement.waiting')!)).to.deep.equal([[undefined, 0]]);
      now = { running: 0, waiting: 7 };
      got = await collect(reader);
      expect(points(got.get('tickd.placement.waiting')!)).to.deep.equal([[undefined, 7]]);
      expect([...got.keys()].filter((n) => n.startsWith('tickd.placement.')).sort()).to.deep.equal([...PLACEMENT_METRIC_NAMES].sort());
      await provider.shutdown();
    });

    it('exports neither cluster metric in single-node mode (no role source, no takeover)', async () => {
      const reader = new TestReader();
      const provider = new MeterProvider({ readers: [reader] });
      createInstruments(provider.getMeter('t'), { connections: () => 0, rules: () => 0, compactions: () => 0 });
      const got = await collect(reader);
      expect([...got.keys()].filter((n) => n.startsWith('tickd.cluster.'))).to.deep.equal([]);
      await provider.shutdown();
    });
  });
  it('records lateness and counts outcomes by runner kind and outcome kind, no-rule jobs included', async () => {
    const reader = new TestReader();
    const provider = new MeterProvider({ readers: [reader] });
    const m = createInstruments(provider.getMeter('t'), { connections: () => 0, rules: () => 0, compactions: () => 0 });
    m.lateness(1.5);
    m.lateness(-3); // a wall clock stepped back: counted as 0
    m.outcome('shell', 'exit', false);
    m.outcome('shell', 'exit', false);
    m.outcome('http', 'http_response', true);
    engineObserver(m).fired({ id: 'j', execution: 1_000_000n, status: 'planned' }, 'no-rule', 3_000_000n);
    const got = await collect(reader);
    expect([...got.keys()]).to.include.members([...EXECUTION_METRIC_NAMES]);
    const lateness = got.get('tickd.execution.lateness_ms')!;
    expect(lateness.descriptor.unit).to.equal('ms');
    const h = lateness.dataPoints[0]!.value as { count: number; sum: number };
    expect([h.count, h.sum]).to.deep.equal([3, 3.5]);
    const outcomes = got.get('tickd.execution.outcomes')!;
    expect(outcomes.descriptor.unit).to.equal('{execution}');
    expect(outcomes.dataPoints.map((p) => [p.attributes, p.value])).to.deep.equal([
      [{ 'tickd.runner.kind': 'shell', 'tickd.runner.outcome': 'exit', 'tickd.outcome': 'failed' }, 2],
      [{ 'tickd.runner.kind': 'http', 'tickd.runner.outcome': 'http_response', 'tickd.outcome': 'executed' }, 1],
      [{ 'tickd.runner.kind': 'none', 'tickd.runner.outcome': 'no_rule', 'tickd.outcome': 'failed' }, 1],
    ]);
    await provider.shutdown();
  });

  it('writes the Prometheus text from a pull reader when OTLP export is off', async () => {
    const meters = startMetricsOnly({ serviceName: 'tickd', serviceVersion: '9.8.7', log: silentLogger() });
    const m = meters.instruments({ connections: () => 2, rules: () => 1, compactions: () => 0 });
    m.executed(false, 4);
    m.outcome('shell', 'exit', false);
    m.lateness(0.7);
    const text = await meters.scrape!();
    expect(text).to.include('# TYPE tickd_execution_outcomes_total counter');
    expect(text).to.match(/^tickd_execution_outcomes_total\{tickd_runner_kind="shell",tickd_runner_outcome="exit",tickd_outcome="failed",otel_scope_name="tickd",otel_scope_version="9\.8\.7"\} 1$/m);
    expect(text).to.include('# TYPE tickd_execution_lateness_ms histogram');
    expect(text).to.match(/^tickd_execution_lateness_ms_bucket\{[^}]*le="1"\} 1$/m);
    expect(text).to.match(/^tickd_jobs_executed_total\{tickd_outcome="failed",[^}]*\} 1$/m);
    expect(text).to.match(/^tickd_connections_active\{[^}]*\} 2$/m);
    expect(text).to.match(/^target_info\{[^}]*service_name="tickd",service_version="9\.8\.7"/m);
    await meters.shutdown(100);
  });

  it('records the tick loop\'s turns in a histogram whose buckets tell turns over 10 ms apart', async () => {
    const reader = new TestReader();
    const provider = new MeterProvider({ readers: [reader] });
    const instruments = createInstruments(provider.getMeter('t'), { connections: () => 0, rules: () => 0, compactions: () => 0 });
    for (const ms of [0.1, 0.4, 2.5, 9.9, 12]) instruments.tickTurn(ms);
    const got = await collect(reader);
    expect([...got.keys()]).to.include.members([...TICK_METRIC_NAMES]);
    const point = got.get('tickd.tick.turn_ms')!.dataPoints[0]!.value as { count: number; buckets: { boundaries: number[]; counts: number[] } };
    expect(point.count).to.equal(5);
    const over10 = point.buckets.counts.slice(point.buckets.boundaries.indexOf(10) + 1).reduce((a, b) => a + b, 0);
    expect(over10).to.equal(1);
    await provider.shutdown();
  });

  it('counts schedules\' skipped occurrences by reason, through the engine\'s observer', async () => {
    const reader = new TestReader();
    const provider = new MeterProvider({ readers: [reader] });
    const observer = engineObserver(createInstruments(provider.getMeter('t'), { connections: () => 0, rules: () => 0, compactions: () => 0 }));
    observer.skipped!('missed', 3);
    observer.skipped!('overlap', 1);
    observer.skipped!('missed', 2);
    const got = await collect(reader);
    expect([...got.keys()]).to.include.members([...SCHEDULE_METRIC_NAMES]);
    const byReason = new Map(got.get('tickd.schedules.skipped')!.dataPoints.map((p) => [p.attributes['tickd.skip.reason'], p.value]));
    expect(Object.fromEntries(byReason)).to.deep.equal({ missed: 5, overlap: 1 });
    await provider.shutdown();
  });
});
