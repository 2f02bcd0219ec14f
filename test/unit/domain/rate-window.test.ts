// The sliding-window rate limit (lib/domain/rate-window.ts): never more than `limit` starts in
// any window of length `per`, checked against a brute-force count over every window.
import { expect } from 'chai';
import { RateWindow } from '../../../lib/domain/rate-window.ts';

const MS = 1_000_000n;

describe('domain/rate-window', () => {
  it('allows `limit` starts at once, then the next one only a window after the oldest', () => {
    const w = new RateWindow(3, 1000n * MS);
    expect([w.tryStart(0n), w.tryStart(0n), w.tryStart(10n * MS), w.tryStart(20n * MS)]).to.deep.equal([true, true, true, false]);
    expect(w.freeAt(20n * MS)).to.equal(1000n * MS);
    expect(w.tryStart(999n * MS)).to.equal(false);
    expect(w.tryStart(1000n * MS)).to.equal(true);
    expect(w.freeAt(1000n * MS)).to.equal(1000n * MS);
    expect(w.tryStart(1000n * MS)).to.equal(true);
    expect(w.freeAt(1000n * MS)).to.equal(1010n * MS);
  });

  it('never lets more than `limit` starts into any window, whatever the arrival pattern (no double burst at a boundary)', () => {
    let seed = 7;
    const rand = (): number => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    for (const [limit, per] of [[1, 100n], [5, 1000n], [10, 1000n], [50, 333n]] as const) {
      const w = new RateWindow(limit, per * MS);
      const started: bigint[] = [];
      let t = 0n;
      for (let i = 0; i < 5000; i++) {
        t += BigInt(Math.floor(rand() * 3 * Number(per * MS) / limit));
        // Each arrival starts at the first instant it may: what a queue under the limit does.
        const at = w.freeAt(t);
        expect(w.tryStart(at)).to.equal(true);
        started.push(at);
        t = at;
      }
      for (let i = 0; i + limit < started.length; i++) {
        expect(started[i + limit]! - started[i]! >= per * MS, `${limit} per ${per} ms: starts ${i}..${i + limit}`).to.equal(true);
      }
    }
  });

  it('refuses a limit below 1 or a window that is not positive', () => {
    expect(() => new RateWindow(0, MS)).to.throw(RangeError);
    expect(() => new RateWindow(1.5, MS)).to.throw(RangeError);
    expect(() => new RateWindow(1, 0n)).to.throw(RangeError);
  });
});
