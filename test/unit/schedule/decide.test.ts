import { expect } from 'chai';
import { Calendar } from '../../../lib/schedule/calendar.ts';
import { decide, MAX_FIRES, MAX_UNFINISHED, type Busy, type Decision, type Progress } from '../../../lib/schedule/decide.ts';
import { readSchedule, type Schedule } from '../../../lib/schedule/spec.ts';

const S = 1_000_000_000n;
const T0 = 1_800_000_000n * S; // a whole 10 s
const idle: Busy = { running: false, held: false, unfinishedAtMost: 0, unfinished: () => 0 };
const schedule = (fields: Record<string, unknown>): Schedule => {
  const r = readSchedule('s', fields);
  if (!('schedule' in r)) throw new Error(`${r.field}: ${r.error}`);
  return r.schedule;
};
const run = (fields: Record<string, unknown>, nowNs: bigint, p: Progress = { decided: T0, fired: 0 }, busy = idle): { d: string[]; progress: Progress } => {
  const s = schedule(fields);
  const { decisions, progress } = decide(s, new Calendar(s), p, nowNs, busy);
  return { d: decisions.map(show), progress };
};
const rel = (ns: bigint): string => String((ns - T0) / S);
function show(d: Decision): string {
  return d.t === 'fire' ? `fire ${rel(d.nominal)}${d.held ? ' held' : ''}` : `skip ${d.reason} ${rel(d.from)}..${rel(d.to)} (${d.count}${d.more ? '+' : ''})`;
}

describe('schedule decisions: each nominal time once, fired or skipped with its reason', () => {
  it('fires what is due on time, and decides nothing twice', () => {
    const first = run({ every: '1s' }, T0 + 1n * S);
    expect(first.d).to.deep.equal(['fire 1']);
    expect(run({ every: '1s' }, T0 + 1n * S, first.progress).d).to.deep.equal([]);
    expect(run({ every: '1s' }, T0 + 3n * S, first.progress).d).to.deep.equal(['fire 2', 'fire 3']); // 2 is 1 s late: on time still
  });

  it('after a stop, follows the missed-run policy: skip, once, all', () => {
    const now = T0 + 5n * S + S / 2n; // 1..4 missed (more than 1 s late), 5 on time
    expect(run({ every: '1s', missed: 'skip' }, now).d).to.deep.equal(['skip missed 1..4 (4)', 'fire 5']);
    expect(run({ every: '1s', missed: 'once' }, now).d).to.deep.equal(['skip missed 1..4 (4)', 'fire 5']);
    expect(run({ every: '1s', missed: 'all' }, now).d).to.deep.equal(['fire 1', 'fire 2', 'fire 3', 'fire 4', 'fire 5']);
    // Nothing on time: once fires the latest missed.
    expect(run({ every: '10s', missed: 'once' }, T0 + 35n * S).d).to.deep.equal(['skip missed 10..20 (2)', 'fire 30']);
    // all: only within the catch-up window.
    expect(run({ every: '10s', missed: 'all', catchup: '15s' }, T0 + 35n * S).d).to.deep.equal(['skip missed 10..10 (1)', 'fire 20', 'fire 30']);
  });

  it('skips a day of missed seconds as one range, counted exactly, at once', () => {
    const { d, progress } = run({ every: '1s', missed: 'skip' }, T0 + 86_400n * S);
    expect(d).to.deep.equal(['skip missed 1..86398 (86398)', 'fire 86399', 'fire 86400']);
    expect(progress).to.deep.equal({ decided: T0 + 86_400n * S, fired: 2 });
    // A cron expression is stepped through: counted up to a cap (COUNT_CAP, 1 000).
    expect(run({ cron: '* * * * * *', missed: 'skip' }, T0 + 86_400n * S).d[0]).to.equal('skip missed 1..86398 (1000+)');
  });

  it('catches up at most MAX_FIRES at a time, the rest on the next call', () => {
    const first = run({ every: '1s', missed: 'all', catchup: '1h' }, T0 + 1_500n * S);
    expect(first.d).to.have.length(MAX_FIRES);
    const rest = run({ every: '1s', missed: 'all', catchup: '1h' }, T0 + 1_500n * S, first.progress);
    expect(rest.d[0]).to.equal(`fire ${MAX_FIRES + 1}`);
    expect(rest.d.at(-1)).to.equal('fire 1500');
  });

  it('overlap: allow fires, skip skips, queue holds one', () => {
    const busy: Busy = { ...idle, running: true, unfinishedAtMost: 1, unfinished: () => 1 };
    const now = T0 + 2n * S + S / 2n;
    const p = { decided: T0 + S, fired: 1 };
    expect(run({ every: '1s', overlap: 'allow' }, now, p, busy).d).to.deep.equal(['fire 2']);
    expect(run({ every: '1s', overlap: 'skip' }, now, p, busy).d).to.deep.equal(['skip overlap 2..2 (1)']);
    expect(run({ every: '1s', overlap: 'queue' }, now, p, busy).d).to.deep.equal(['fire 2 held']);
    expect(run({ every: '1s', overlap: 'queue' }, now, p, { ...idle, running: true, held: true, unfinishedAtMost: 2, unfinished: () => 2 }).d).to.deep.equal(['skip overlap 2..2 (1)']);
    // Within one call, the first fired is the one running.
    expect(run({ every: '1s', overlap: 'skip', missed: 'all' }, T0 + 3n * S + S / 2n).d).to.deep.equal(['fire 1', 'skip overlap 2..2 (1)', 'skip overlap 3..3 (1)']);
  });

  it('whatever the overlap policy, MAX_UNFINISHED waiting or running is the most: beyond it an occurrence is skipped for overlap', () => {
    let asked = 0;
    const near = (n: number): Busy => ({ ...idle, running: true, unfinishedAtMost: n + 5, unfinished: () => { asked++; return n; } });
    const p = { decided: T0 + S, fired: 1 };
    // 999 unfinished: 2 fires, and 3 (missed, `all`) waits for room, as 4 (on time) after it.
    expect(run({ every: '1s', missed: 'all' }, T0 + 4n * S + S / 2n, p, near(MAX_UNFINISHED - 1)).d).to.deep.equal(['fire 2']);
    // On time, with no catch-up before it: skipped for overlap.
    expect(run({ every: '1s' }, T0 + 2n * S + S / 2n, p, near(MAX_UNFINISHED - 1)).d).to.deep.equal(['fire 2']);
    expect(run({ every: '1s' }, T0 + 2n * S + S / 2n, p, near(MAX_UNFINISHED)).d).to.deep.equal(['skip overlap 2..2 (1)']);
    // `all` catching up stops at the bound, `full`: the rest is decided as occurrences end.
    const s = schedule({ every: '1s', missed: 'all', catchup: '1d' });
    const caught = decide(s, new Calendar(s), p, T0 + 5000n * S, near(MAX_UNFINISHED - 3));
    expect(caught.decisions.map(show)).to.deep.equal(['fire 2', 'fire 3', 'fire 4']);
    expect(caught.progress).to.deep.equal({ decided: T0 + 4n * S, fired: 4 });
    expect(caught.full).to.equal(true);
    expect(asked).to.equal(4); // once a call, and only near the bound
    run({ every: '1s' }, T0 + 4n * S, p, { ...idle, unfinishedAtMost: 10, unfinished: () => { throw new Error('counted far from the bound'); } });
  });

  it('limit counts what fired; start and end bound it; jitter is derived and kept', () => {
    expect(run({ every: '1s', limit: 2 }, T0 + 5n * S, { decided: T0 + 3n * S, fired: 1 }).d).to.deep.equal(['fire 4']);
    expect(run({ every: '1s', limit: 2 }, T0 + 9n * S, { decided: T0 + 4n * S, fired: 2 }).d).to.deep.equal([]);
    expect(run({ every: '1s', start: String(T0 + 3n * S), end: String(T0 + 5n * S) }, T0 + 9n * S, { decided: T0, fired: 0 }).d)
      .to.deep.equal(['skip missed 3..3 (1)', 'fire 4']);
    const s = schedule({ every: '1m', jitter: '30s' });
    const a = decide(s, new Calendar(s), { decided: T0, fired: 0 }, T0 + 60n * S, idle).decisions[0]!;
    const b = decide(s, new Calendar(s), { decided: T0, fired: 0 }, T0 + 60n * S, idle).decisions[0]!;
    expect(a).to.deep.equal(b);
    expect(a.t === 'fire' && a.at >= a.nominal && a.at <= a.nominal + 30n * S).to.equal(true);
  });
});
