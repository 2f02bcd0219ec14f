// What watch computes and shows (lib/ctl/watch-diff.ts, watch-view.ts): events between polls,
// lateness as an upper bound on the first sign of a firing, net rates, JSON lines, the screen.
import { expect } from 'chai';
import type { Job } from '../../../lib/domain/job.ts';
import { JobTracker, StatRates } from '../../../lib/ctl/watch-diff.ts';
import { eventLine, formatDuration, screen, statLine } from '../../../lib/ctl/watch-view.ts';

const MS = 1_000_000n;
const job = (id: string, status: Job['status'], execution: bigint): Job => ({ id, status, execution });
const seen = (j: Job, seenNs: bigint) => ({ job: j, seenNs });

describe('ctl/watch', () => {
  it('the first poll is the baseline: no events', () => {
    const t = new JobTracker();
    expect(t.update([seen(job('a', 'executed', 1n), 10n)], 10n)).to.deep.equal([]);
    expect(t.size).to.equal(1);
  });

  it('reports status changes, new and removed jobs; lateness on the first sign of a firing', () => {
    const t = new JobTracker();
    t.update([seen(job('a', 'planned', 1000n * MS), 0n), seen(job('b', 'planned', 1000n * MS), 0n), seen(job('gone', 'executed', 5n), 0n)], 0n);
    const ev = t.update([
      seen(job('a', 'triggered', 1000n * MS), 1012n * MS),
      seen(job('b', 'executed', 1000n * MS), 1030n * MS),
      seen(job('new', 'planned', 9n), 1031n * MS),
      seen(job('fast', 'failed', 1020n * MS), 1031n * MS),
    ], 1040n * MS);
    expect(ev).to.deep.equal([
      { id: 'a', from: 'planned', to: 'triggered', execution: 1000n * MS, seenNs: 1012n * MS, latenessMaxNs: 12n * MS },
      { id: 'b', from: 'planned', to: 'executed', execution: 1000n * MS, seenNs: 1030n * MS, latenessMaxNs: 30n * MS },
      { id: 'new', from: null, to: 'planned', execution: 9n, seenNs: 1031n * MS, latenessMaxNs: null },
      { id: 'fast', from: null, to: 'failed', execution: 1020n * MS, seenNs: 1031n * MS, latenessMaxNs: 11n * MS },
      { id: 'gone', from: 'executed', to: null, execution: 5n, seenNs: 1040n * MS, latenessMaxNs: null },
    ]);
    // triggered -> executed: a change, but not the firing (its lateness was given already)
    const next = t.update([seen(job('a', 'executed', 1000n * MS), 1100n * MS)], 1100n * MS);
    expect(next[0]).to.deep.include({ id: 'a', from: 'triggered', to: 'executed', latenessMaxNs: null });
  });

  it('no event for an unchanged job or a planned job moved in time; a rerun between polls is one', () => {
    const t = new JobTracker();
    t.update([seen(job('p', 'planned', 5n), 0n), seen(job('d', 'executed', 10n), 0n)], 0n);
    const ev = t.update([seen(job('p', 'planned', 7n), 1n), seen(job('d', 'executed', 20n), 25n)], 30n);
    expect(ev).to.deep.equal([{ id: 'd', from: 'executed', to: 'executed', execution: 20n, seenNs: 25n, latenessMaxNs: 5n }]);
  });

  it('rates are the change of the counts per second, from the second STAT on', () => {
    const r = new StatRates();
    expect(r.update([['jobs_executed', '10'], ['jobs_failed', '0'], ['jobs_total', '100']], 0n)).to.equal(null);
    expect(r.update([['jobs_executed', '30'], ['jobs_failed', '1'], ['jobs_total', '90']], 2_000_000_000n)).to.deep.equal({ jobs_executed: 10, jobs_failed: 0.5, jobs_total: -5 });
  });

  it('JSON lines carry exact integers and RFC 3339 times', () => {
    const view = { addr: 'h:1', prefix: 'a.', intervalMs: 1000, atNs: 1_775_822_400_000_000_000n, stat: [['jobs_total', '2'], ['persistence', 'memory']] as Array<[string, string]>, rates: null, watched: 2 };
    expect(JSON.parse(statLine(view))).to.deep.equal({ type: 'stat', time: '2026-04-10T12:00:00.000000000Z', prefix: 'a.', watched: 2, stat: { jobs_total: 2, persistence: 'memory' }, rates_per_s: null });
    const line = eventLine({ id: 'a.1', from: 'planned', to: 'executed', execution: 1_775_822_399_999_999_999n, seenNs: 1_775_822_400_000_000_000n, latenessMaxNs: 1n });
    expect(line).to.equal('{"type":"job","time":"2026-04-10T12:00:00.000000000Z","id":"a.1","from":"planned","to":"executed","execution":1775822399999999999,"lateness_max_ns":1}\n');
  });

  it('the screen redraws in place: home, cleared lines, newest event first, as many as fit', () => {
    const view = { addr: 'h:1', prefix: '', intervalMs: 500, atNs: 0n, stat: [['jobs_total', '3']] as Array<[string, string]>, rates: { jobs_total: 1, jobs_executed: 2, jobs_failed: 0 }, watched: 3 };
    const events = [1n, 2n, 3n].map((i) => ({ id: `j${i}`, from: 'planned' as const, to: 'executed' as const, execution: 0n, seenNs: i * MS, latenessMaxNs: i * MS }));
    const text = screen(view, events, { columns: 200, rows: 9 }, false);
    expect(text.startsWith('\x1b[H')).to.equal(true);
    expect(text.endsWith('\x1b[J')).to.equal(true);
    const lines = text.slice(3).split('\n').map((l) => l.replace(/\x1b\[K$/, ''));
    expect(lines[0]).to.match(/^tickd ctl watch h:1 {2}prefix "" {2}every 500\.0 ms/);
    expect(lines[1]).to.match(/^jobs 3: planned \?/);
    expect(lines[3]).to.equal('rates per s (net): executed +2.0  failed +0.0  jobs +1.0');
    const shown = lines.filter((l) => / j\d {2}/.test(l));
    expect(shown.map((l) => / (j\d) /.exec(l)![1])).to.deep.equal(['j3', 'j2']);
    expect(shown[0]).to.include('late <= 3.0 ms');
  });

  it('durations read in the unit that fits', () => {
    expect(formatDuration(850_000n)).to.equal('850 us');
    expect(formatDuration(12_345_678n)).to.equal('12.3 ms');
    expect(formatDuration(4_100_000_000n)).to.equal('4.1 s');
    expect(formatDuration(-2_000_000n)).to.equal('-2.0 ms');
  });
});
