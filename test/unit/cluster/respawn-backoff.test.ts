// When a dead worker is replaced (cluster/respawn-backoff.ts): at once, then doubling waits up
// to the cap while replacements keep dying young, and at once again after a worker lived long.
import { expect } from 'chai';
import { BACKOFF_MAX_MS, BACKOFF_MIN_MS, RespawnBackoff, STABLE_AFTER_MS } from '../../../cluster/respawn-backoff.ts';

describe('cluster/respawn-backoff', () => {
  it('doubles from the minimum to the cap while workers die young', () => {
    const b = new RespawnBackoff();
    const waits = Array.from({ length: 9 }, () => b.next(50));
    expect(waits).to.deep.equal([100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000]);
    expect(waits[0]).to.equal(BACKOFF_MIN_MS);
    expect(waits.at(-1)).to.equal(BACKOFF_MAX_MS);
  });

  it('starts over once a worker lived past STABLE_AFTER_MS', () => {
    const b = new RespawnBackoff();
    b.next(50);
    b.next(50);
    expect(b.next(STABLE_AFTER_MS + 1)).to.equal(BACKOFF_MIN_MS);
    expect(b.next(STABLE_AFTER_MS)).to.equal(2 * BACKOFF_MIN_MS);
  });
});
