// A burst of due jobs is fired in slices (lib/engine/firing.ts FIRE_SLICE) and the ticker
// runs the next slice on the following event-loop turn (lib/engine/tick.ts): the event
// loop gets a turn between slices, which is when the first executions' requests leave and
// commands are served. Before, one tick marked and dispatched up to 20 000 jobs before anything
// else could run.
import { expect } from 'chai';
import sinon from 'sinon';
import { Engine } from '../../../lib/engine/engine.ts';
import { FIRE_SLICE } from '../../../lib/engine/firing.ts';
import { Ticker } from '../../../lib/engine/tick.ts';
import { JobStore } from '../../../lib/store/jobs.ts';
import { RuleStore } from '../../../lib/store/rules.ts';
import type { StatValues } from '../../../lib/domain/stat.ts';

const BURST = 20_000;

function burstEngine(onDispatch: (n: number) => void) {
  const jobs = new JobStore();
  const rules = new RuleStore();
  let dispatched = 0;
  const engine = new Engine({
    jobs, rules, journal: null,
    dispatch: () => onDispatch(++dispatched),
    stat: () => ({}) as StatValues,
    onPersistError: () => {},
  });
  engine.execute({ op: 'rule.set', rule: { id: 'r', pattern: 'b.', runner: { type: 'direct', executable: '/bin/true', args: [] } } });
  for (let i = 0; i < BURST; i++) engine.execute({ op: 'job.set', id: `b.${i}`, execution: 100n });
  return { engine, jobs, dispatched: () => dispatched };
}

describe('scheduler: a burst of due jobs', () => {
  it('one tick fires one slice (at most FIRE_SLICE jobs, fewer when they take over 1 ms) and says more is due; the next ticks finish the burst', () => {
    const { engine, dispatched, jobs } = burstEngine(() => {});
    expect(engine.tick(100n)).to.equal(true);
    expect(dispatched()).to.be.within(1, FIRE_SLICE);
    let ticks = 1;
    let last = dispatched();
    while (engine.tick(100n)) {
      ticks++;
      expect(dispatched() - last).to.be.within(1, FIRE_SLICE);
      last = dispatched();
    }
    ticks++; // the last slice, which said nothing more is due
    expect(dispatched()).to.equal(BURST);
    expect(ticks).to.be.at.least(Math.ceil(BURST / FIRE_SLICE));
    expect([...jobs.withStatus('triggered')].length).to.equal(BURST);
    expect(engine.tick(100n)).to.equal(false); // nothing left: the idle tick
  });

  it('a slice stops at the first chunk of 32 that took 1 ms or more (a cold daemon, a slow machine)', () => {
    const { engine, dispatched } = burstEngine(() => {});
    let now = 0;
    const stub = sinon.stub(performance, 'now').callsFake(() => (now += 2)); // every chunk "takes" 2 ms
    try {
      expect(engine.tick(100n)).to.equal(true);
      expect(dispatched()).to.equal(32);
    } finally {
      stub.restore();
    }
  });

  it('the event loop gets a turn after the first slice, long before the burst is all fired', async () => {
    let dispatchedAtFirstTurn = -1;
    const done = Promise.withResolvers<void>();
    const { engine, dispatched } = burstEngine((n) => {
      if (n === 1) setImmediate(() => { dispatchedAtFirstTurn = dispatched(); });
      if (n === BURST) done.resolve();
    });
    const ticker = new Ticker(1, () => engine.tick(100n));
    ticker.start();
    await done.promise;
    ticker.stop();
    // At 1 Hz the paced ticks alone would take 78 s: the slices ran as continuations.
    expect(dispatchedAtFirstTurn).to.be.within(1, 2 * FIRE_SLICE);
  });
});
