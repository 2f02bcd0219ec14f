// Reading the daemon's schedule answers (tickd-protocol(7) SCHEDULES), for the client and `tickd ctl sched`:
// each function takes one reply line with its request id removed and returns null for anything
// that is not that line. Pure.
//
// A schedule line is `<id> <key=value>... next=<ns|none> fired=<n> skipped_missed=<n>
// skipped_overlap=<n>`, the options quoted as the protocol quotes arguments. It is read as
// text, not through readSchedule: the client only shows what the daemon holds, so a zone this
// machine's zone database lacks, or a field a newer daemon adds, still shows as it was sent.
// The options whose values the JSON output writes as numbers or booleans are checked for that
// form; a line without the four counters is not a schedule line (so `ERROR ...` never reads
// as one).
import type { OccurrenceView, SkipReason } from '../domain/schedule.ts';
import { validateIdentifier } from '../domain/identifier.ts';
import { tokenize } from '../protocol/tokenize.ts';

export interface ScheduleLine {
  readonly id: string;
  /** The schedule's options as the daemon wrote them, in its order (cron or every, tz, ...). */
  readonly options: ReadonlyArray<readonly [string, string]>;
  /** The next nominal time not decided yet; null when none is left. */
  readonly next: bigint | null;
  readonly fired: bigint;
  readonly skippedMissed: bigint;
  readonly skippedOverlap: bigint;
}

const INTEGER = /^-?\d{1,19}$/;
const COUNT = /^\d{1,19}$/;
/** Options whose values are integers (instants in nanoseconds, counts). */
export const INTEGER_OPTIONS: readonly string[] = ['start', 'end', 'limit', 'keep'];
const COUNTERS = ['next', 'fired', 'skipped_missed', 'skipped_overlap'] as const;

function optionForm(key: string, value: string): boolean {
  if (INTEGER_OPTIONS.includes(key)) return INTEGER.test(value);
  if (key === 'paused') return value === 'true' || value === 'false';
  return true;
}

/** A schedule line, as SCHEDULE GET, SET, PAUSE, RESUME answer after `OK ` and LIST lists. */
export function parseScheduleLine(rest: string): ScheduleLine | null {
  const t = tokenize(rest);
  if (t === null || t.length < 1 + COUNTERS.length || validateIdentifier('job', t[0]!) !== null) return null;
  const options: Array<[string, string]> = [];
  const counters = new Map<string, string>();
  const seen = new Set<string>();
  for (const token of t.slice(1)) {
    const eq = token.indexOf('=');
    if (eq <= 0) return null;
    const key = token.slice(0, eq);
    const value = token.slice(eq + 1);
    if (seen.has(key)) return null;
    seen.add(key);
    if ((COUNTERS as readonly string[]).includes(key)) counters.set(key, value);
    else if (optionForm(key, value)) options.push([key, value]);
    else return null;
  }
  const next = counters.get('next');
  const fired = counters.get('fired');
  const missed = counters.get('skipped_missed');
  const overlap = counters.get('skipped_overlap');
  if (next === undefined || (next !== 'none' && !INTEGER.test(next))) return null;
  if (fired === undefined || missed === undefined || overlap === undefined || ![fired, missed, overlap].every((c) => COUNT.test(c))) return null;
  if (!seen.has('cron') && !seen.has('every')) return null;
  return {
    id: t[0]!,
    options,
    next: next === 'none' ? null : BigInt(next),
    fired: BigInt(fired),
    skippedMissed: BigInt(missed),
    skippedOverlap: BigInt(overlap),
  };
}

/** The value of one of a schedule's options, or null when the line has none. */
export function optionOf(s: ScheduleLine, key: string): string | null {
  return s.options.find(([k]) => k === key)?.[1] ?? null;
}

/** A SCHEDULE NEXT line: one nominal time in nanoseconds. */
export function parseInstantLine(rest: string): bigint | null {
  return INTEGER.test(rest) ? BigInt(rest) : null;
}

const OUTCOMES: ReadonlyArray<OccurrenceView['outcome']> = ['planned', 'triggered', 'executed', 'failed', 'removed', 'held', 'skipped'];
const REASONS: readonly SkipReason[] = ['missed', 'overlap'];

/**
 * A SCHEDULE HISTORY line: `<nominal ns> <outcome> <job id or ->`, then for a skip
 * ` reason=<missed|overlap> from=<ns> count=<n>`, then ` manual` for a run now.
 */
export function parseHistoryLine(rest: string): OccurrenceView | null {
  const t = rest.split(' ');
  if (t.length < 3 || !INTEGER.test(t[0]!)) return null;
  const outcome = t[1] as OccurrenceView['outcome'];
  if (!OUTCOMES.includes(outcome)) return null;
  const job = t[2] === '-' ? null : t[2]!;
  if (job !== null && validateIdentifier('job', job) !== null) return null;
  const view: { -readonly [K in keyof OccurrenceView]: OccurrenceView[K] } = { nominal: BigInt(t[0]!), job, outcome };
  for (const token of t.slice(3)) {
    if (token === 'manual' && view.manual === undefined) {
      view.manual = true;
      continue;
    }
    const eq = token.indexOf('=');
    const key = token.slice(0, eq);
    const value = token.slice(eq + 1);
    if (key === 'reason' && view.reason === undefined && (REASONS as readonly string[]).includes(value)) view.reason = value as SkipReason;
    else if (key === 'from' && view.from === undefined && INTEGER.test(value)) view.from = BigInt(value);
    else if (key === 'count' && view.count === undefined && /^\d{1,9}$/.test(value)) view.count = Number(value);
    else return null;
  }
  return view;
}
