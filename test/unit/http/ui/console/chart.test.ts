// The activity chart's pure part (lib/http/ui/console/chart.js): path data with gaps for
// seconds without a runner start, a readable top of each axis, the still-filling bucket left
// out, and the sentence about the last minute.
import { expect } from 'chai';

interface Model {
  seconds: number;
  spanMs: number;
  counts: Record<string, number[]>;
  lateness: Record<string, Array<number | null>>;
  countMax: number;
  latenessMax: number;
  lastMinute: Record<string, number | null>;
}
interface Chart {
  HEIGHT: number;
  niceCeil(v: number): number;
  linePath(values: Array<number | null>, max: number): string;
  chartModel(activity: unknown): Model | null;
  describeMinute(model: Model | null): string;
}

const MODULE = new URL('../../../../../lib/http/ui/console/chart.js', import.meta.url).href;

function bucket(atMs: number, fired: number, failed: number, p50: number | null, max: number | null): Record<string, unknown> {
  // As parseExact gives them: integers as strings, fractions as numbers.
  return { at_ms: String(atMs), fired: String(fired), executed: String(fired - failed), failed: String(failed), lateness_p50_ms: p50, lateness_max_ms: max };
}

describe('http/ui/console/chart.js', () => {
  let c: Chart;
  before(async () => {
    c = (await import(MODULE)) as Chart;
  });

  it('niceCeil rounds up to 1, 2 or 5 times a power of ten', () => {
    expect([0, 0.3, 1, 1.5, 2, 3, 7, 10, 11, 240, 999, 1001].map((v) => c.niceCeil(v))).to.deep.equal([1, 1, 1, 2, 2, 5, 10, 10, 20, 500, 1000, 2000]);
  });

  it('linePath draws one unit per value, top is max, null breaks the line, a lone value is a dot', () => {
    expect(c.linePath([0, 5, 10], 10)).to.equal('M0 100L1 50L2 0');
    expect(c.linePath([1, null, 3, 4, null, 2], 4)).to.equal('M0 75h0M2 25L3 0M5 50h0');
    expect(c.linePath([20], 10)).to.equal('M0 0h0'); // clipped at the top
    expect(c.linePath([null, null], 1)).to.equal('');
  });

  it('chartModel leaves out the still-filling bucket and sums the last minute', () => {
    const buckets = Array.from({ length: 300 }, (_, i) => bucket(1_000_000 + i * 1000, i >= 200 ? 3 : 0, i >= 290 ? 1 : 0, i >= 200 ? 2.5 : null, i >= 200 ? 7 : null));
    buckets[299] = bucket(1_299_000, 1000, 1000, 9999, 9999); // current second: ignored
    const m = c.chartModel({ interval_ms: '1000', buckets })!;
    expect(m.seconds).to.equal(299);
    expect(m.spanMs).to.equal(299_000);
    expect(m.counts['fired']!.length).to.equal(299);
    expect(m.countMax).to.equal(5);
    expect(m.latenessMax).to.equal(10);
    expect(m.lateness['p50']![0]).to.equal(null);
    expect(m.lastMinute).to.deep.equal({ fired: 180, executed: 171, failed: 9, latenessMax: 7, latenessP50: 2.5 });
    expect(c.describeMinute(m)).to.equal('Last minute: 180 fired, 171 executed, 9 failed; runner lateness up to 7 ms, latest median 2.5 ms.');
  });

  it('nothing to draw without two complete buckets', () => {
    expect(c.chartModel(null)).to.equal(null);
    expect(c.chartModel({ interval_ms: '1000', buckets: [bucket(0, 1, 0, 1, 1), bucket(1000, 1, 0, 1, 1)] })).to.equal(null);
    expect(c.describeMinute(null)).to.equal('No activity recorded yet.');
    const quiet = c.chartModel({ interval_ms: '1000', buckets: Array.from({ length: 5 }, (_, i) => bucket(i * 1000, 0, 0, null, null)) })!;
    expect(quiet.countMax).to.equal(1);
    expect(c.describeMinute(quiet)).to.equal('Last minute: 0 fired, 0 executed, 0 failed; no runner started.');
  });
});
