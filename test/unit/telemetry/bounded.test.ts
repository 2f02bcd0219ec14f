import { expect } from 'chai';
import { ExportLedger, MAX_QUEUE } from '../../../lib/telemetry/bounded.ts';

type Result = { code: number; error?: Error };

function fakeExporter() {
  const calls: Array<{ items: string[]; done: (r: Result) => void }> = [];
  return { calls, export(items: string[], done: (r: Result) => void): void { calls.push({ items, done }); } };
}

describe('telemetry/bounded', () => {
  it('refuses items beyond MAX_QUEUE and counts them as dropped', () => {
    const ledger = new ExportLedger();
    for (let i = 0; i < MAX_QUEUE; i++) expect(ledger.admit('traces')).to.equal(true);
    expect(ledger.admit('traces')).to.equal(false);
    expect(ledger.admit('traces')).to.equal(false);
    expect(ledger.counts.traces.dropped).to.equal(2);
    expect(ledger.admit('logs')).to.equal(true); // queues are per signal
  });

  it('frees queue places when a batch is handed to the exporter and counts its result', () => {
    const ledger = new ExportLedger();
    const exporter = fakeExporter();
    ledger.watch('logs', exporter, (items) => items.length);
    for (let i = 0; i < 3; i++) ledger.admit('logs');
    const results: Result[] = [];
    exporter.export(['a', 'b'], (r) => results.push(r));
    expect(ledger.waiting('logs')).to.equal(1);
    exporter.calls[0]!.done({ code: 0 });
    exporter.export(['c'], (r) => results.push(r));
    exporter.calls[1]!.done({ code: 1, error: new Error('503') });
    expect(results.map((r) => r.code)).to.deep.equal([0, 1]);
    expect(ledger.counts.logs).to.deep.equal({ exported: 2, failed: 1, dropped: 0 });
    expect(ledger.waiting('logs')).to.equal(0);
  });

  it('reports losses once, then only new ones', () => {
    const ledger = new ExportLedger();
    expect(ledger.lossesSinceLastReport()).to.equal(null);
    const exporter = fakeExporter();
    ledger.watch('metrics', exporter, (items) => items.length);
    exporter.export(['x', 'y'], () => {});
    exporter.calls[0]!.done({ code: 1 });
    expect(ledger.lossesSinceLastReport()?.metrics).to.deep.equal({ failed: 2, dropped: 0 });
    expect(ledger.lossesSinceLastReport()).to.equal(null);
  });
});
