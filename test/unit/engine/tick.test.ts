// The tick loop's pacing (lib/engine/tick.ts) under fake timers and a fake monotonic clock:
// the first tick runs at start, tick k is due at start + k*period whatever each tick costs,
// a loop more than four periods behind skips ahead instead of bursting, ticks that overrun run
// back to back for a bounded time, ticks after the first
// fall on the wall-clock grid (multiples of the period in epoch time, found again when the
// clock is re-anchored), awakeFor keeps the loop turning just before the tick of an
// announced instant (and only then), and stop() stops.
import { expect } from 'chai';
import sinon from 'sinon';
import { AWAKE_LEAD_NS, TURN_BUDGET_NS, Ticker } from '../../../lib/engine/tick.ts';

const turns = async (n = 3): Promise<void> => { for (let i = 0; i < n; i++) await new Promise<void>((r) => setImmediate(r)); };

describe('scheduler/tick', () => {
  let clock: sinon.SinonFakeTimers;
  beforeEach(() => { clock = sinon.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'hrtime'] }); });
  afterEach(() => clock.restore());

  it('ticks at the framerate: once at start, then every period', () => {
    let n = 0;
    const t = new Ticker(100, () => { n++; });
    t.start();
    expect(n).to.equal(1);
    clock.tick(1000);
    expect(n).to.equal(101);
    t.stop();
  });

  it('time spent inside a tick shortens the next wait: tick k stays due at start + k*period', () => {
    let n = 0;
    const t = new Ticker(100, () => {
      n++;
      if (n === 1) clock.tick(7); // the first tick costs 7 of its 10 ms
    });
    t.start();
    clock.tick(2);
    expect(n).to.equal(1);
    clock.tick(1); // 10 ms after start, not 10 ms after the first tick ended
    expect(n).to.equal(2);
    t.stop();
  });

  it('a loop blocked for many periods skips ahead instead of firing a burst of ticks', async () => {
    let n = 0;
    let block = true;
    const t = new Ticker(100, () => {
      n++;
      if (block) { block = false; clock.tick(1000); } // one tick blocks the loop for 100 periods
    });
    t.start();
    await turns();
    const afterBlock = n;
    expect(afterBlock).to.be.below(7); // at most the 4-period allowance, not 100
    clock.tick(100);
    expect(n - afterBlock).to.be.within(9, 11);
    t.stop();
  });

  it('ticks that each take their period or more run back to back for TURN_BUDGET_NS at most, then a turn lets I/O in', async () => {
    let n = 0;
    const costMs = 1.5; // every tick costs 1.5 periods (100 Hz is 10 ms: at 1 kHz, 1 ms)
    const t = new Ticker(1000, () => {
      n++;
      if (n < 50) clock.tick(costMs); // the loop is always behind (50: so a loop that never yields ends)
    });
    t.start();
    const perTurn = Math.ceil(Number(TURN_BUDGET_NS) / 1e6 / costMs);
    expect(n).to.equal(perTurn); // start() returned once the budget was spent (before: never, while ticks overran)
    let io = 0;
    for (let i = 0; i < 5; i++) {
      const before = n;
      await new Promise<void>((r) => setImmediate(() => { io++; r(); }));
      expect(n - before).to.be.at.most(perTurn); // what else was ready ran between two such runs
    }
    expect(io).to.equal(5);
    expect(n).to.be.above(perTurn);
    t.stop();
  });

  it('onTurn has the wall time of each turn that ran ticks, a burst\'s slices included, and of no other', async () => {
    const walls: number[] = [];
    let n = 0;
    let burst = 0;
    const t = new Ticker(1000, () => {
      n++;
      if (n <= 4) clock.tick(1.5); // behind: two ticks a turn (3 ms, past TURN_BUDGET_NS)
      if (n === 6) { burst = 2; }
      if (burst > 0) { burst--; clock.tick(4); return true; } // a burst: its next slice on a turn of its own
      return false;
    }, (hr) => hr, (ns) => walls.push(Number(ns) / 1e6));
    t.start();
    await turns(4);
    // two overrunning ticks a turn, twice; ticks 5 and 6 (the burst's first slice); tick 7, the burst's next slice alone
    expect(walls.slice(0, 4)).to.deep.equal([3, 3, 4, 4]);
    const seen = walls.length;
    clock.tick(0.5); // within the period: the loop wakes for no tick
    await turns(2);
    expect(walls.length).to.equal(seen);
    t.stop();
  });

  it('after the first tick, ticks fall where the wall clock reads a multiple of the period', () => {
    const at: bigint[] = [];
    // The wall clock reads 3 ms ahead of the monotonic one: the grid is at 7, 17, 27... ms.
    const t = new Ticker(100, () => { at.push(process.hrtime.bigint()); }, (hr) => hr + 3_000_000n);
    t.start();
    clock.tick(30);
    expect(at).to.deep.equal([0n, 7_000_000n, 17_000_000n, 27_000_000n]);
    t.stop();
  });

  it('a re-anchored wall clock moves the ticks to its grid from the next one on', () => {
    const at: bigint[] = [];
    let offset = 3_000_000n;
    const t = new Ticker(100, () => { at.push(process.hrtime.bigint()); }, (hr) => hr + offset);
    t.start();
    clock.tick(10); // ticks at 0 and 7; the one at 17 is already set
    offset = 8_000_000n; // an NTP step: the grid is now at 2, 12, 22... ms
    clock.tick(25);
    expect(at).to.deep.equal([0n, 7_000_000n, 17_000_000n, 22_000_000n, 32_000_000n]);
    t.stop();
  });

  it('awakeFor(T): from AWAKE_LEAD_NS before the tick that covers T the loop turns instead of sleeping, and runs that tick on a turn', async () => {
    const lead = Number(AWAKE_LEAD_NS / 1_000_000n);
    const at: bigint[] = [];
    const t = new Ticker(100, () => { at.push(process.hrtime.bigint()); });
    t.start(); // ticks at 0, 10, 20...
    t.awakeFor(35_000_000n); // covered by the tick at 40
    clock.tick(40 - lead - 1);
    await turns();
    expect(at, 'timer-paced so far').to.deep.equal([0n, 10_000_000n, 20_000_000n, 30_000_000n]);
    clock.tick(1); // the lead begins: the timer wakes the loop, which then turns
    await turns();
    clock.tick(lead);
    expect(at, 'no timer runs the tick at 40').to.have.length(4);
    await turns();
    expect(at, 'a turn ran it').to.deep.equal([0n, 10_000_000n, 20_000_000n, 30_000_000n, 40_000_000n]);
    clock.tick(10);
    expect(at.at(-1), 'then timer-paced again').to.equal(50_000_000n);
    t.stop();
  });

  it('awakeFor(T) leaves the ticks before the lead timer-paced, and stop() ends the turns', async () => {
    const at: bigint[] = [];
    const t = new Ticker(100, () => { at.push(process.hrtime.bigint()); });
    t.start();
    t.awakeFor(95_000_000n); // covered by the tick at 100: awake from 98
    clock.tick(97);
    expect(at, 'each tick from its timer, within clock.tick').to.have.length(10);
    clock.tick(1);
    await turns();
    t.stop();
    clock.tick(10);
    await turns();
    expect(at, 'stopped: neither a turn nor a timer ticks').to.have.length(10);
  });

  it('stop() cancels the pending tick; start() again resumes', () => {
    let n = 0;
    const t = new Ticker(100, () => { n++; });
    t.start();
    t.stop();
    clock.tick(1000);
    expect(n).to.equal(1);
    t.start();
    t.start(); // a second start while running changes nothing
    clock.tick(100);
    expect(n).to.equal(12);
    t.stop();
  });
});
