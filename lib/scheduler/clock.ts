// Wall-clock nanoseconds with sub-millisecond resolution. Due times are wall-clock (jobs name
// an instant since the epoch), but Date.now() only has milliseconds, which alone would add up
// to 1 ms of lateness. So we anchor the monotonic high-resolution clock to the wall clock and
// re-anchor whenever the two drift apart by more than a millisecond (NTP steps, suspend).
const NS_PER_MS = 1_000_000n;

let anchorWall = BigInt(Date.now()) * NS_PER_MS;
let anchorMono = process.hrtime.bigint();

export function wallNowNs(): bigint {
  const now = anchorWall + (process.hrtime.bigint() - anchorMono);
  const wall = BigInt(Date.now()) * NS_PER_MS;
  const drift = now - wall;
  if (drift > 2n * NS_PER_MS || drift < -NS_PER_MS) {
    anchorWall = wall;
    anchorMono = process.hrtime.bigint();
    return wall;
  }
  return now;
}
