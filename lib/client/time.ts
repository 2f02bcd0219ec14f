// Times as the protocol has them: bigint nanoseconds since the Unix epoch (tickd-protocol(7)
// Timestamps), and the helpers between them and Date or ISO 8601 strings. A Date holds
// milliseconds, so dateFromNs truncates toward the past; the ISO helpers are exact to the
// nanosecond (they are the daemon's own, lib/domain/time.ts).
import { formatIso, parseIsoTimestamp } from '../domain/time.ts';

/** What a call takes as a time: nanoseconds, a Date, or an ISO 8601 string with a zone. */
export type When = bigint | Date | string;

const NS_PER_MS = 1_000_000n;

export function nsFromDate(date: Date): bigint {
  const ms = date.getTime();
  if (!Number.isFinite(ms)) throw new RangeError('invalid Date');
  return BigInt(ms) * NS_PER_MS;
}

/** The Date of `ns`, to the millisecond below it. */
export function dateFromNs(ns: bigint): Date {
  const ms = ns / NS_PER_MS - (ns % NS_PER_MS < 0n ? 1n : 0n);
  return new Date(Number(ms));
}

/** `2026-04-10T12:00:00.123456789Z`-style UTC text, fraction only as long as needed. */
export function isoFromNs(ns: bigint): string {
  return formatIso(ns);
}

/** An ISO 8601 / RFC 3339 time with a zone (Z or an offset), fraction up to 9 digits. */
export function nsFromIso(text: string): bigint {
  const ns = parseIsoTimestamp(text);
  if (typeof ns === 'string') throw new RangeError(`not an ISO 8601 time with a zone: ${JSON.stringify(text)} (${ns})`);
  return ns;
}

/** Any When as nanoseconds. */
export function toNs(when: When): bigint {
  if (typeof when === 'bigint') return when;
  if (when instanceof Date) return nsFromDate(when);
  if (typeof when === 'string') return nsFromIso(when);
  throw new TypeError(`a time is a bigint (nanoseconds), a Date or an ISO 8601 string, not ${typeof when}`);
}

/** Now, as nanoseconds (the millisecond clock's). */
export function nowNs(): bigint {
  return BigInt(Date.now()) * NS_PER_MS;
}
