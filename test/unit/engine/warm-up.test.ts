// The primary's start-up warm-up (lib/engine/warm-up.ts): the firing path run on stores of its
// own. What it must do is take every scratch job through that path; what it must not do is
// touch anything else (the daemon tests of /metrics and /activity count exactly from a start).
import { expect } from 'chai';
import sinon from 'sinon';
import { WARM_UP_JOBS, warmUpFiring } from '../../../lib/engine/warm-up.ts';
import { FIRE_SLICE, Firing } from '../../../lib/engine/firing.ts';

describe('engine: the firing warm-up', () => {
  it('fires every scratch job through Firing, in slices, and dispatches each once', () => {
    const slices = sinon.spy(Firing.prototype, 'fireDue');
    try {
      expect(warmUpFiring()).to.equal(WARM_UP_JOBS);
      // More than one slice: the slice loop itself is part of the path that gets compiled.
      expect(slices.callCount).to.be.at.least(Math.ceil(WARM_UP_JOBS / FIRE_SLICE));
    } finally {
      slices.restore();
    }
  });

  it('runs again from nothing: it keeps no state between calls', () => {
    expect(warmUpFiring(10)).to.equal(10);
    expect(warmUpFiring(10)).to.equal(10);
  });
});
