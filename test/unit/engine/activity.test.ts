import { expect } from 'chai';
import { ACTIVITY_SECONDS, ActivityRing, LATENESS_SAMPLES } from '../../../lib/engine/activity.ts';

const T0 = 1_893_484_800_000; // a whole second, epoch ms

describe('engine/activity (ActivityRing)', () => {
  it('counts per second and gives every second of the window, oldest first, the current one last', () => {
    const ring = new ActivityRing();
    ring.recordFired(T0 + 10);
    ring.recordFired(T0 + 990);
    ring.recordFinished(T0 + 500, true);
    ring.recordFinished(T0 + 1500, false);
    ring.recordFired(T0 + 1999);
    const view = ring.snapshot(T0 + 1200);
    expect(view.intervalMs).to.equal(1000);
    expect(view.buckets).to.have.length(ACTIVITY_SECONDS);
    expect(view.buckets.at(-1)).to.deep.equal({ atMs: T0 + 1000, fired: 1, executed: 0, failed: 1, latenessP50Ms: null, latenessMaxMs: null });
    expect(view.buckets.at(-2)).to.deep.equal({ atMs: T0, fired: 2, executed: 1, failed: 0, latenessP50Ms: null, latenessMaxMs: null });
    expect(view.buckets[0]).to.deep.equal({ atMs: T0 + 1000 - (ACTIVITY_SECONDS - 1) * 1000, fired: 0, executed: 0, failed: 0, latenessP50Ms: null, latenessMaxMs: null });
    expect(view.buckets.map((b) => b.atMs)).to.deep.equal(view.buckets.map((_, i) => T0 + 1000 - (ACTIVITY_SECONDS - 1 - i) * 1000));
  });

  it('gives the median (nearest rank) and the maximum lateness of a second', () => {
    const ring = new ActivityRing();
    for (const ms of [5, 1, 3, 2, 40]) ring.recordLateness(T0 + 1, ms);
    ring.recordLateness(T0 + 1001, 7);
    const [b0, b1] = ring.snapshot(T0 + 1001).buckets.slice(-2);
    expect([b0!.latenessP50Ms, b0!.latenessMaxMs]).to.deep.equal([3, 40]);
    expect([b1!.latenessP50Ms, b1!.latenessMaxMs]).to.deep.equal([7, 7]);
    ring.recordLateness(T0 + 2, 0.5);
    ring.recordLateness(T0 + 2, 0.25);
    // 7 samples now: 0.25 0.5 1 2 3 5 40 -> the 4th
    expect(ring.snapshot(T0 + 1001).buckets.at(-2)!.latenessP50Ms).to.equal(2);
  });

  it('reuses a slot for a later second without showing the earlier counts, and leaves out what fell out of the window', () => {
    const ring = new ActivityRing(10);
    ring.recordFired(T0);
    ring.recordLateness(T0, 9);
    ring.recordFired(T0 + 10_000); // the same slot, ten seconds later
    const view = ring.snapshot(T0 + 10_000);
    expect(view.buckets).to.have.length(10);
    expect(view.buckets.at(-1)).to.include({ fired: 1, latenessMaxMs: null });
    expect(view.buckets.reduce((n, b) => n + b.fired, 0)).to.equal(1);
    // Seen from further on, that second too is gone.
    expect(ring.snapshot(T0 + 30_000).buckets.every((b) => b.fired === 0)).to.equal(true);
  });

  it('keeps at most LATENESS_SAMPLES samples per second, an exact maximum, and a median from the sample', () => {
    let seed = 1;
    const random = () => { seed = (seed * 16807) % 2147483647; return seed / 2147483647; };
    const ring = new ActivityRing(ACTIVITY_SECONDS, LATENESS_SAMPLES, random);
    for (let i = 1; i <= 10_000; i++) ring.recordLateness(T0, i);
    const b = ring.snapshot(T0).buckets.at(-1)!;
    expect(b.latenessMaxMs).to.equal(10_000);
    expect(b.latenessP50Ms).to.be.within(4000, 6000);
  });
});
