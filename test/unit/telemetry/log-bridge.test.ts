import { expect } from 'chai';
import bunyan from 'bunyan';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { createLogBridge } from '../../../lib/telemetry/log-bridge.ts';

describe('telemetry/log-bridge', () => {
  const exporter = new InMemoryLogRecordExporter();
  const provider = new LoggerProvider({ processors: [new SimpleLogRecordProcessor({ exporter })] });
  after(() => provider.shutdown());
  beforeEach(() => exporter.reset());

  function logger(level = bunyan.WARN): bunyan {
    return bunyan.createLogger({ name: 'tickd', role: 'worker', streams: [{ type: 'raw', level, stream: createLogBridge(provider.getLogger('test')) }] });
  }

  it('forwards warn, error and fatal with severity, body and attributes', () => {
    const log = logger(bunyan.DEBUG);
    log.info('not exported');
    log.warn({ job: 'a.b', count: 3, nested: { big: 1 } }, 'something odd');
    log.error('broken');
    log.fatal('gone');
    const records = exporter.getFinishedLogRecords();
    expect(records.map((r) => [r.severityNumber, r.severityText, r.body])).to.deep.equal([
      [SeverityNumber.WARN, 'WARN', 'something odd'],
      [SeverityNumber.ERROR, 'ERROR', 'broken'],
      [SeverityNumber.FATAL, 'FATAL', 'gone'],
    ]);
    expect(records[0]!.attributes).to.deep.equal({ role: 'worker', job: 'a.b', count: 3, nested: '{"big":1}' });
    expect(records[0]!.spanContext).to.equal(undefined);
  });

  it('correlates a record carrying trace_id/span_id with that span', () => {
    logger().warn({ trace_id: '0af7651916cd43dd8448eb211c80319c', span_id: 'b7ad6b7169203331', trace_flags: 1 }, 'authentication failed');
    const [rec] = exporter.getFinishedLogRecords();
    expect(rec!.spanContext?.traceId).to.equal('0af7651916cd43dd8448eb211c80319c');
    expect(rec!.spanContext?.spanId).to.equal('b7ad6b7169203331');
    expect(rec!.attributes).to.not.have.property('trace_id');
  });

  it('ignores malformed trace ids instead of failing', () => {
    logger().warn({ trace_id: 'zz', span_id: 'not hex' }, 'odd ids');
    const [rec] = exporter.getFinishedLogRecords();
    expect(rec!.body).to.equal('odd ids');
    expect(rec!.spanContext).to.equal(undefined);
  });

  it('maps an error to exception attributes', () => {
    logger().error({ err: new TypeError('bad thing') }, 'failed');
    const [rec] = exporter.getFinishedLogRecords();
    expect(rec!.attributes['exception.type']).to.equal('TypeError');
    expect(rec!.attributes['exception.message']).to.equal('bad thing');
  });

  it('keeps telemetry\'s own reports local (no feedback through a failing exporter)', () => {
    logger().child({ component: 'telemetry' }).warn('export failing');
    expect(exporter.getFinishedLogRecords()).to.have.length(0);
  });

  it('never throws into the log statement', () => {
    const bridge = createLogBridge({ emit: () => { throw new Error('boom'); }, enabled: () => true });
    expect(() => bridge.write({ level: 40, msg: 'x' })).to.not.throw();
  });
});
