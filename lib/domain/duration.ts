// Durations, as `tickd ctl` reads them (tickd-ctl(1) TIMES) and schedules take them
// (lib/schedule/README.md): one or more <integer><unit> with no spaces, units ns us ms s
// m h d: 30s, 5m, 1h30m, 250ms. Exact integer arithmetic (bigint), never floating point.

const UNITS: readonly (readonly [string, bigint])[] = [
  ['d', 86_400_000_000_000n], ['h', 3_600_000_000_000n], ['m', 60_000_000_000n], ['s', 1_000_000_000n],
  ['ms', 1_000_000n], ['us', 1_000n], ['ns', 1n],
];
const UNIT_NS: ReadonlyMap<string, bigint> = new Map(UNITS);
const DURATION = /^(?:\d{1,19}(?:ns|us|ms|s|m|h|d))+$/;
const PART = /(\d+)(ns|us|ms|s|m|h|d)/g;

export const DURATION_FORM = 'a duration such as 30s, 5m, 1h30m or 250ms (units ns us ms s m h d)';

/** `1h30m` -> nanoseconds; null when it is not a duration. */
export function parseDurationNs(text: string): bigint | null {
  if (!DURATION.test(text)) return null;
  let ns = 0n;
  for (const m of text.matchAll(PART)) ns += BigInt(m[1]!) * UNIT_NS.get(m[2]!)!;
  return ns;
}

/** The shortest text parseDurationNs reads back as `ns` (`0s` for zero); `ns` is not negative. */
export function formatDuration(ns: bigint): string {
  if (ns === 0n) return '0s';
  let rest = ns;
  let out = '';
  for (const [name, size] of UNITS) {
    const n = rest / size;
    if (n > 0n) out += `${n}${name}`;
    rest -= n * size;
  }
  return out;
}
