// OpenTelemetry's timestamp form. The hrtime-to-epoch conversion itself is lib/clock.ts's
// EpochClock (shared with the scheduler). Invariant: integer arithmetic only, never a float.

const NS_PER_S = 1_000_000_000n;

/** OpenTelemetry's HrTime: [seconds, nanoseconds] since the epoch. */
export function toHrTime(epochNs: bigint): [number, number] {
  const clamped = epochNs < 0n ? 0n : epochNs;
  return [Number(clamped / NS_PER_S), Number(clamped % NS_PER_S)];
}
