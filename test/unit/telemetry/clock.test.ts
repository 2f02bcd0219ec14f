import { expect } from 'chai';
import { EpochClock } from '../../../lib/clock.ts';
import { toHrTime } from '../../../lib/telemetry/clock.ts';

describe('telemetry/clock', () => {
  it('maps hrtime readings onto the wall clock with exact nanosecond offsets', () => {
    let hr = 5_000_000_123n;
    const clock = new EpochClock({ wallMs: () => 1_700_000_000_000, hrNs: () => hr });
    expect(clock.toEpochNs(5_000_000_123n)).to.equal(1_700_000_000_000_000_000n);
    expect(clock.toEpochNs(5_000_000_123n - 1_500n)).to.equal(1_699_999_999_999_998_500n);
    hr += 7n;
    expect(clock.toEpochNs(hr)).to.equal(1_700_000_000_000_000_007n);
  });

  it('re-anchors after a minute so a wall-clock step is followed', () => {
    let hr = 0n;
    let wall = 1_000;
    const clock = new EpochClock({ wallMs: () => wall, hrNs: () => hr });
    hr = 61_000_000_000n;
    wall = 1_000 + 61_000 + 5_000; // the wall clock was stepped 5 s forward meanwhile
    expect(clock.toEpochNs(hr)).to.equal(67_000_000_000n);
  });

  it('splits epoch nanoseconds into [seconds, nanoseconds] without rounding', () => {
    expect(toHrTime(1_795_289_583_550_655_945n)).to.deep.equal([1_795_289_583, 550_655_945]);
    expect(toHrTime(-5n)).to.deep.equal([0, 0]);
  });
});
