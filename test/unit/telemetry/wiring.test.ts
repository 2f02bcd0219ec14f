import { expect } from 'chai';
import bunyan from 'bunyan';
import { parseConfig } from '../../../lib/config/load.ts';
import { loadTelemetry, requestHook, type Telemetry } from '../../../lib/telemetry/wiring.ts';

function capture(): { log: bunyan; records: Array<Record<string, unknown>> } {
  const records: Array<Record<string, unknown>> = [];
  const log = bunyan.createLogger({ name: 'tickd', streams: [{ type: 'raw', level: bunyan.DEBUG, stream: { write: (r: object) => records.push(r as Record<string, unknown>) } }] });
  return { log, records };
}

describe('telemetry/wiring', () => {
  it('starts nothing when [telemetry] is disabled (the default)', async () => {
    const { log } = capture();
    expect(await loadTelemetry(parseConfig('', null), log, 'worker', '0.0.0')).to.equal(null);
  });

  it('logs a failed AUTH as a warning, without telemetry too', () => {
    const { log, records } = capture();
    const hook = requestHook(log, null);
    hook({ rid: '', instruction: 'AUTH', startedNs: 1n, success: false });
    hook({ rid: '', instruction: 'AUTH', startedNs: 1n, success: true });
    hook({ rid: 'x', instruction: 'GET', startedNs: 1n, success: false });
    expect(records.map((r) => [r['level'], r['msg']])).to.deep.equal([[bunyan.WARN, 'authentication failed']]);
  });

  it('records a span per request and ties the AUTH warning to it', () => {
    const { log, records } = capture();
    const seen: string[] = [];
    const telemetry = {
      requestSpan: (info: { rid: string }) => { seen.push(info.rid); return { trace_id: 't'.repeat(32), span_id: 's'.repeat(16), trace_flags: 1 }; },
    } as unknown as Telemetry;
    const hook = requestHook(log, telemetry);
    hook({ rid: 'r1', instruction: 'STAT', startedNs: 1n, success: true });
    hook({ rid: '', instruction: 'AUTH', startedNs: 1n, success: false });
    expect(seen).to.deep.equal(['r1', '']);
    expect(records).to.have.length(1);
    expect(records[0]).to.include({ msg: 'authentication failed', trace_id: 't'.repeat(32), span_id: 's'.repeat(16) });
  });
});
