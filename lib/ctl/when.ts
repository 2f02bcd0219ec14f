// WHEN, the execution time given to `job set` and read by `job import` (tickd-ctl(1) TIMES),
// and the durations of --timeout, --interval and relative times. Pure: `now` is passed in, so
// every relative time of one command (a whole import) counts from the same instant.
//
// WHEN is one of:
//   integer nanoseconds since the epoch      1775822400000000000
//   YYYY-MM-DD HH:MM:SS (UTC)                one word "2026-04-10 12:00:00" or two words
//   RFC 3339 / ISO 8601 with a zone          2026-04-10T14:00:00.5+02:00
//   now, now+DURATION, now-DURATION, +DURATION
// The absolute forms are the daemon's own grammar (lib/domain/time.ts), so ctl accepts exactly
// what SET does; the result is always sent as integer nanoseconds.
//
// DURATION is lib/domain/duration.ts's: one or more <integer><unit> with no spaces, units ns us
// ms s m h d: 30s, 5m, 1h30m, 250ms. The result must fit i64 like any time.
import { parseDurationNs } from '../domain/duration.ts';
import { I64_MAX, I64_MIN, parseTcpTimestamp } from '../domain/time.ts';

const NS_PER_S = 1_000_000_000n;
const RELATIVE = /^(?:now([+-])|\+)(.*)$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

export const WHEN_FORMS = 'integer nanoseconds, "YYYY-MM-DD HH:MM:SS" (UTC), RFC 3339 with a zone, now, +DURATION or now-DURATION (30s, 5m, 2h, 1h30m)';

export { parseDurationNs };

/**
 * A duration option (--timeout, --interval) in milliseconds: a DURATION, or a plain integer
 * counting seconds. Returns a message for anything else or anything outside [minMs, maxMs].
 */
export function parseDurationMs(text: string, minMs: number, maxMs: number): number | string {
  const ns = /^\d{1,6}$/.test(text) ? BigInt(text) * NS_PER_S : parseDurationNs(text);
  if (ns === null) return `"${text}" is not a duration (examples: 5s, 500ms, 1m)`;
  const ms = Number(ns / 1_000_000n);
  if (ms < minMs || ms > maxMs) return `"${text}" is out of range (${minMs} ms to ${maxMs / 1000} s)`;
  return ms;
}

/** The words of WHEN (one, or two for `YYYY-MM-DD HH:MM:SS`) as nanoseconds, or a message. */
export function parseWhen(words: readonly string[], nowNs: bigint): { ns: bigint } | { error: string } {
  if (words.length === 0) return { error: 'missing WHEN' };
  const text = words.join(' ');
  if (words.length === 1) {
    if (text === 'now') return { ns: nowNs };
    const rel = RELATIVE.exec(text);
    if (rel !== null) {
      const d = parseDurationNs(rel[2]!);
      if (d === null) return { error: `invalid WHEN "${text}": "${rel[2]}" is not a duration (30s, 5m, 2h, 1h30m, 250ms)` };
      const ns = rel[1] === '-' ? nowNs - d : nowNs + d;
      if (ns < I64_MIN || ns > I64_MAX) return { error: `invalid WHEN "${text}": out of range (i64 nanoseconds)` };
      return { ns };
    }
  }
  if (words.length > 2 || (words.length === 2 && !DATE.test(words[0]!))) {
    return { error: `invalid WHEN "${text}": WHEN is one word, or two for YYYY-MM-DD HH:MM:SS` };
  }
  const r = parseTcpTimestamp(words);
  if ('ns' in r) return r;
  const why = r.error.startsWith('not a valid timestamp') ? `expected ${WHEN_FORMS}` : r.error;
  return { error: `invalid WHEN "${text}": ${why}` };
}
