// Wall-clock nanoseconds with sub-millisecond resolution. Due times are wall-clock (jobs name
// an instant since the epoch), but Date.now() only has milliseconds, which alone would add up
// to 1 ms of lateness. So the monotonic high-resolution clock is anchored to the wall clock
// at sub-millisecond precision (performance.timeOrigin + performance.now()), and re-anchored
// whenever it drifts from Date.now() by more than two milliseconds (NTP steps, suspend).
const NS_PER_MS = 1_000_000n;
const DRIFT_NS = 2n * NS_PER_MS;

function preciseWallNs(): bigint {
  return BigInt(Math.round((performance.timeOrigin + performance.now()) * 1000)) * 1000n;
}

let anchorWall = preciseWallNs();
let anchorMono = process.hrtime.bigint();

export function wallNowNs(): bigint {
  const now = anchorWall + (process.hrtime.bigint() - anchorMono);
  const drift = now - BigInt(Date.now()) * NS_PER_MS;
  // Date.now() truncates: a correct clock reads 0..1 ms ahead of it.
  if (drift > DRIFT_NS + NS_PER_MS || drift < -DRIFT_NS) {
    anchorWall = BigInt(Date.now()) * NS_PER_MS;
    anchorMono = process.hrtime.bigint();
    return anchorWall;
  }
  return now;
}
