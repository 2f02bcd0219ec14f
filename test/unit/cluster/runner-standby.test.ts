// The runner child's standby (cluster/runner-standby.ts) under a fake setTimeout and wall
// clock (the loop's real turns, setImmediate, go on while the fake time stands): asleep until LEAD_MS before the due instant, awake (the event loop kept turning) from
// then until a request arrives or TAIL_MS after the instant, one announcement at a time.
import { expect } from 'chai';
import sinon from 'sinon';
import { LEAD_MS, Standby, TAIL_MS, type StandbyEnd } from '../../../cluster/runner-standby.ts';

const MS = 1_000_000n;
const turns = async (n = 3): Promise<void> => { for (let i = 0; i < n; i++) await new Promise<void>((r) => setImmediate(r)); };
const EPOCH = 1_800_000_000_000n * MS;

describe('cluster/runner-standby', () => {
  let clock: sinon.SinonFakeTimers;
  let ends: StandbyEnd[];
  let standby: Standby;
  const now = (): bigint => EPOCH + BigInt(clock.now) * MS;

  beforeEach(() => {
    clock = sinon.useFakeTimers({ now: 0, toFake: ['setTimeout', 'clearTimeout'] });
    ends = [];
    standby = new Standby(now, (e) => ends.push(e));
  });
  afterEach(() => {
    standby.stop();
    clock.restore();
  });

  it('sleeps until LEAD_MS before the due instant, then keeps the loop turning until a request arrives', async () => {
    const due = EPOCH + 100n * MS;
    standby.at(due);
    clock.tick(100 - LEAD_MS - 1);
    await turns();
    expect(standby.awake, 'asleep before the lead').to.equal(false);
    clock.tick(1);
    await turns();
    expect(standby.awake, 'awake from the lead on').to.equal(true);
    clock.tick(LEAD_MS + 1);
    await turns();
    expect(standby.awake, 'turns go on past the due instant').to.equal(true);
    standby.arrived();
    expect(standby.awake).to.equal(false);
    expect(ends).to.deep.equal([{ dueNs: due, awakeMs: LEAD_MS + 1, ended: 'request' }]);
  });

  it('gives up TAIL_MS after the due instant when no request comes', async () => {
    const due = EPOCH + 50n * MS;
    standby.at(due);
    clock.tick(50 - LEAD_MS);
    await turns();
    clock.tick(LEAD_MS + TAIL_MS - 1);
    await turns();
    expect(standby.awake, 'still within the tail').to.equal(true);
    clock.tick(1);
    await turns();
    expect(standby.awake).to.equal(false);
    expect(ends).to.deep.equal([{ dueNs: due, awakeMs: LEAD_MS + TAIL_MS, ended: 'tail' }]);
  });

  it('a request before the lead leaves the standby armed; a new instant replaces the armed one', async () => {
    standby.at(EPOCH + 100n * MS);
    clock.tick(10);
    standby.arrived(); // an earlier job's request: the announced instant is still ahead
    const later = EPOCH + 1100n * MS;
    standby.at(later);
    clock.tick(100);
    await turns();
    expect(standby.awake, 'the first instant was replaced').to.equal(false);
    clock.tick(1000 - LEAD_MS - 10);
    await turns();
    expect(standby.awake).to.equal(true);
    standby.arrived();
    expect(ends.map((e) => e.dueNs)).to.deep.equal([later]);
  });

  it('an instant already past (a late announcement) ends at once, and stop() disarms silently', async () => {
    clock.tick(1000);
    standby.at(EPOCH);
    await turns();
    expect(standby.awake).to.equal(false);
    expect(ends.map((e) => e.ended)).to.deep.equal(['tail']);
    standby.at(EPOCH + 2000n * MS);
    expect(standby.awake).to.equal(false);
    standby.stop();
    clock.tick(2000);
    await turns();
    expect(standby.awake).to.equal(false);
    expect(ends).to.have.length(1);
  });
});
