// Timestamps: parsing the accepted text forms into i64 nanoseconds since the epoch, and
// formatting nanoseconds back as ISO 8601 (tickd-protocol(7) Timestamps).
//
// Invariants:
// - Exact integer arithmetic only (day counting + BigInt). Date parsing is never used: it
//   accepts garbage, silently rolls 2026-02-31 over to March and loses nanoseconds.
// - Every result lies within i64; anything else is an error, never a clamp and never epoch 0.
// - Errors are returned as strings that do not name the argument: callers prefix it
//   ("invalid timestamp: ...", "execution: ...").
//
// Accepted grammar (case-insensitive T and Z, as RFC 3339 §5.6 allows):
//   integer     -?[0-9]+                          nanoseconds
//   datetime    YYYY-MM-DD(T|t| )HH:MM:SS[.f{1,9}][Z|z|(+|-)HH:MM]
// With a `T` separator the zone is required (no zone -> rejected). With a space separator and
// no zone it is the spec's `YYYY-MM-DD HH:MM:SS` form, which is UTC. Leap seconds (:60), the
// ISO basic format (20260410T120000Z), `+HHMM` offsets and week/ordinal dates are rejected.

export const I64_MIN = -(1n << 63n);
export const I64_MAX = (1n << 63n) - 1n;

const NS_PER_SECOND = 1_000_000_000n;
const SECONDS_PER_DAY = 86_400;

const INTEGER = /^-?[0-9]+$/;
const DATE_ONLY = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;
// Fixed-width pieces and one bounded-by-input fraction: no backtracking blow-up on long input.
const DATETIME =
  /^([0-9]{4})-([0-9]{2})-([0-9]{2})([Tt ])([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?(?:([Zz])|([+-])([0-9]{2}):([0-9]{2}))?$/;

const UNRECOGNISED =
  'not a valid timestamp (expected integer nanoseconds, "YYYY-MM-DD HH:MM:SS" (UTC), or ISO 8601 with Z or an offset)';
export const OUT_OF_RANGE =
  'out of range (i64 nanoseconds: 1677-09-21T00:12:43.145224192Z to 2262-04-11T23:47:16.854775807Z)';

/** Days from 1970-01-01 to the given proleptic Gregorian date (H. Hinnant's algorithm). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function civilFromDays(days: number): [number, number, number] {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return [yoe + era * 400 + (month <= 2 ? 1 : 0), month, day];
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

function inI64(ns: bigint): boolean {
  return ns >= I64_MIN && ns <= I64_MAX;
}

function parseInteger(s: string): bigint | string {
  const ns = BigInt(s);
  return inI64(ns) ? ns : OUT_OF_RANGE;
}

/** zoneRequired: false only for the TCP forms, where a space-separated datetime without a zone is UTC. */
function parseDatetime(s: string, zoneRequired: boolean): bigint | string {
  const m = DATETIME.exec(s);
  if (m === null) return UNRECOGNISED;
  const [, ys, mos, ds, sep, hs, mis, ss, frac, zulu, sign, ohs, oms] = m;
  const year = Number(ys);
  const month = Number(mos);
  const day = Number(ds);
  const hour = Number(hs);
  const minute = Number(mis);
  const second = Number(ss);
  if (month < 1 || month > 12) return `month ${mos} out of range`;
  if (day < 1 || day > daysInMonth(year, month)) return `day ${ds} out of range for ${ys}-${mos}`;
  if (hour > 23) return `hour ${hs} out of range`;
  if (minute > 59) return `minute ${mis} out of range`;
  if (second > 59) return `second ${ss} out of range (leap seconds are not supported)`;
  if (frac !== undefined && frac.length > 9) return 'fraction has more than 9 digits (nanosecond precision)';
  const hasZone = zulu !== undefined || sign !== undefined;
  if (!hasZone && (zoneRequired || sep !== ' ')) return 'timestamp needs a zone (Z or +HH:MM / -HH:MM)';
  let offsetSeconds = 0;
  if (sign !== undefined) {
    const oh = Number(ohs);
    const om = Number(oms);
    if (oh > 23 || om > 59) return `offset ${sign}${ohs}:${oms} out of range`;
    offsetSeconds = (sign === '-' ? -1 : 1) * (oh * 3600 + om * 60);
  }
  // Local time minus offset = UTC. All magnitudes here stay far below 2^53, so Number is exact.
  const seconds = daysFromCivil(year, month, day) * SECONDS_PER_DAY + hour * 3600 + minute * 60 + second - offsetSeconds;
  const fractionNs = frac === undefined ? 0n : BigInt(frac.padEnd(9, '0'));
  const ns = BigInt(seconds) * NS_PER_SECOND + fractionNs;
  return inI64(ns) ? ns : OUT_OF_RANGE;
}

/**
 * One TCP SET timestamp token: integer nanoseconds, `YYYY-MM-DD HH:MM:SS` (one quoted token,
 * UTC, optionally with a fraction and a zone) or ISO 8601 / RFC 3339 with a zone.
 * Returns the nanoseconds or an error message.
 */
export function parseTimestampToken(s: string): bigint | string {
  if (INTEGER.test(s)) return parseInteger(s);
  if (DATE_ONLY.test(s)) return 'date without a time (expected YYYY-MM-DD HH:MM:SS)';
  return parseDatetime(s, false);
}

/**
 * The SET arguments after the job identifier: one token as in parseTimestampToken, or the two
 * tokens `YYYY-MM-DD` `HH:MM:SS` (UTC). Any token beyond what the form needs is an error.
 */
export function parseTcpTimestamp(tokens: readonly string[]): { ns: bigint } | { error: string } {
  if (tokens.length === 0) return { error: 'missing timestamp' };
  let result: bigint | string;
  if (tokens.length === 2 && DATE_ONLY.test(tokens[0]!)) {
    result = parseDatetime(`${tokens[0]} ${tokens[1]}`, false);
  } else if (tokens.length === 1) {
    result = parseTimestampToken(tokens[0]!);
  } else {
    return { error: 'too many arguments after the timestamp' };
  }
  return typeof result === 'bigint' ? { ns: result } : { error: result };
}

/** An ISO 8601 / RFC 3339 datetime with a zone (HTTP `execution`). Integers are not accepted. */
export function parseIsoTimestamp(s: string): bigint | string {
  if (typeof s !== 'string') return UNRECOGNISED;
  return parseDatetime(s, true);
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

/**
 * `YYYY-MM-DDTHH:MM:SS[.fraction]Z` in UTC; trailing zeros of the fraction are trimmed and a
 * zero fraction is omitted. Exact for the whole i64 range, including before 1970.
 */
export function formatIso(ns: bigint): string {
  // BigInt division truncates toward zero; floor it so pre-1970 fractions stay positive.
  let seconds = ns / NS_PER_SECOND;
  let fraction = ns % NS_PER_SECOND;
  if (fraction < 0n) {
    seconds -= 1n;
    fraction += NS_PER_SECOND;
  }
  const secs = Number(seconds); // |seconds| < 2^35: exact
  const days = Math.floor(secs / SECONDS_PER_DAY);
  const sod = secs - days * SECONDS_PER_DAY;
  const [year, month, day] = civilFromDays(days);
  const time = `${pad(Math.floor(sod / 3600), 2)}:${pad(Math.floor((sod % 3600) / 60), 2)}:${pad(sod % 60, 2)}`;
  const frac = fraction === 0n ? '' : `.${fraction.toString().padStart(9, '0').replace(/0+$/, '')}`;
  return `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T${time}${frac}Z`;
}
