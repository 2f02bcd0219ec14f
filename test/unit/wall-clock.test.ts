import { expect } from 'chai';
import { wallNowNs, wallOfHr } from '../../lib/clock.ts';

describe('clock: the process wall clock', () => {
  it('reads the wall clock in nanoseconds, monotonically, within a millisecond of Date.now()', () => {
    let prev = wallNowNs();
    for (let i = 0; i < 10000; i++) {
      const before = BigInt(Date.now()) * 1_000_000n;
      const now = wallNowNs();
      const after = BigInt(Date.now() + 1) * 1_000_000n;
      expect(now >= prev, 'monotonic').to.equal(true);
      expect(now >= before - 2_000_000n && now <= after + 2_000_000n, `${now} within [${before}, ${after}]`).to.equal(true);
      prev = now;
    }
  });
  it('reads a monotonic reading as the wall time it was taken at (the tick grid is placed by it)', () => {
    const before = wallNowNs();
    const hr = process.hrtime.bigint();
    const after = wallNowNs();
    const at = wallOfHr(hr);
    expect(at >= before && at <= after, `${at} within [${before}, ${after}]`).to.equal(true);
    expect(wallOfHr(hr + 1_953_125n) - at).to.equal(1_953_125n);
  });
  it('has sub-millisecond resolution', () => {
    const seen = new Set<bigint>();
    for (let i = 0; i < 1000; i++) seen.add(wallNowNs() % 1_000_000n);
    expect(seen.size).to.be.greaterThan(10);
  });
});
