import { expect } from 'chai';
import { SpanKind } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { EpochClock } from '../../../lib/clock.ts';
import { createRequestSpans, SPAN_NAME } from '../../../lib/telemetry/spans.ts';

describe('telemetry/spans', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  after(() => provider.shutdown());
  beforeEach(() => exporter.reset());

  it('records one SERVER root span from receive time to now with the request attributes', () => {
    let hr = 10_000_000_000n;
    const clock = new EpochClock({ wallMs: () => 1_700_000_000_000, hrNs: () => hr });
    const record = createRequestSpans(provider.getTracer('test'), clock);
    hr += 2_500_000n; // answered 2.5 ms after receipt
    const ref = record({ rid: 'r7', instruction: 'RULE SET', startedNs: 10_000_000_000n, success: false });
    const [span] = exporter.getFinishedSpans();
    expect(span).to.not.equal(undefined);
    expect(span!.name).to.equal(SPAN_NAME);
    expect(span!.kind).to.equal(SpanKind.SERVER);
    expect(span!.parentSpanContext).to.equal(undefined);
    expect(span!.attributes).to.deep.equal({ 'tickd.command': 'RULE SET', 'tickd.request.id': 'r7', 'tickd.success': false });
    expect(span!.startTime).to.deep.equal([1_700_000_000, 0]);
    expect(span!.endTime).to.deep.equal([1_700_000_000, 2_500_000]);
    expect(ref).to.deep.equal({ trace_id: span!.spanContext().traceId, span_id: span!.spanContext().spanId, trace_flags: 1 });
  });

  it('never ends a span before it starts (a receive time in the future is clamped)', () => {
    const hr = 1_000n;
    const record = createRequestSpans(provider.getTracer('test'), new EpochClock({ wallMs: () => 0, hrNs: () => hr }));
    record({ rid: 'x', instruction: 'STAT', startedNs: 9_999n, success: true });
    const [span] = exporter.getFinishedSpans();
    expect(span!.duration).to.deep.equal([0, 0]);
  });
});
