// Wall-clock nanoseconds with sub-millisecond resolution for due times (jobs name an instant
// since the epoch). The hrtime-to-epoch anchoring is lib/clock.ts's, shared with telemetry.
import { EpochClock } from '../clock.ts';

const clock = new EpochClock();

export function wallNowNs(): bigint {
  return clock.nowNs();
}

/** The wall-clock nanoseconds of a process.hrtime.bigint() reading, in the same reading as wallNowNs. */
export function wallOfHr(hr: bigint): bigint {
  return clock.toEpochNs(hr);
}
