// When the leader deletes a removal's message (lib/jetstream/removal-deletions.ts), under fake
// timers: not before its hold is over, not before every other node has applied it, then
// once; nothing while the view of the others may be stale; once paused (the leader fenced)
// only a graceful stop's drain deletes, after waiting out the hold; close() deletes nothing more.
import { expect } from 'chai';
import sinon from 'sinon';
import { HOLD_MS, RemovalDeletions } from '../../../lib/jetstream/removal-deletions.ts';

describe('jetstream/removal-deletions', () => {
  let clock: sinon.SinonFakeTimers;
  let others: number;
  let deleted: number[];
  let d: RemovalDeletions;
  beforeEach(() => {
    clock = sinon.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance'] });
    others = Infinity;
    deleted = [];
    d = new RemovalDeletions({ appliedByOthers: () => others, deleteMessage: async (seq) => { deleted.push(seq); } });
  });
  afterEach(() => {
    d.close();
    clock.restore();
  });

  it('deletes a removal once its hold is over when no other node is listed', () => {
    d.hold(7);
    clock.tick(HOLD_MS - 300);
    expect(deleted).to.deep.equal([]);
    clock.tick(600);
    expect(deleted).to.deep.equal([7]);
    expect(d.waiting).to.equal(0);
    clock.tick(10 * HOLD_MS);
    expect(deleted, 'once').to.deep.equal([7]);
  });

  it('keeps a removal while another node has not applied it, whatever the time', () => {
    others = 6;
    d.hold(7);
    d.hold(5);
    clock.tick(10 * HOLD_MS);
    expect(deleted).to.deep.equal([5]);
    others = 7;
    clock.tick(300);
    expect(deleted).to.deep.equal([5, 7]);
  });

  it('drain() waits out the hold of what no node needs, and leaves what a node still needs', async () => {
    others = 10;
    d.hold(9);
    d.hold(11);
    const drained = d.drain();
    await clock.tickAsync(HOLD_MS);
    await drained;
    expect(deleted).to.deep.equal([9]);
    expect(d.waiting).to.equal(1);
  });

  it('paused (the leader fenced): deletes nothing on its own, a graceful drain still does', async () => {
    d.hold(3);
    d.pause();
    d.hold(4);
    clock.tick(10 * HOLD_MS);
    expect(deleted).to.deep.equal([]);
    await d.drain();
    expect(deleted).to.deep.equal([3, 4]);
  });

  it('holds everything while the view of the other nodes may be stale', () => {
    others = -Infinity;
    d.hold(3);
    clock.tick(10 * HOLD_MS);
    expect(deleted).to.deep.equal([]);
  });

  it('close() deletes nothing more', () => {
    d.hold(3);
    d.close();
    d.hold(4);
    clock.tick(10 * HOLD_MS);
    expect(deleted).to.deep.equal([]);
  });
});
