// When a schedule's occurrences fall (lib/schedule/README.md; issue 37): the
// next nominal times after an instant, from a cron expression read in a time zone, or from a
// fixed interval. Pure arithmetic over the pinned cron library; the engine only asks "next
// after T".
//
// croner is pinned to an exact version (package.json): its DST behaviour changed between
// major versions (10.x skipped a fixed time that falls in a spring-forward gap; 11 runs it at
// the end of the gap, as Vixie cron does), and test/unit/schedule/calendar.test.ts holds the
// behaviour we document, so an upgrade that changes it fails there. The rules (Vixie cron's):
// a fixed time (one value each in seconds, minutes and hours) inside a spring-forward gap runs
// at the end of the gap, the same day; one inside a fall-back repeated hour runs once, at its
// first occurrence; a stepped or wildcard field runs in both copies of a repeated hour and
// skips the times a gap removes. Day-of-month and day-of-week, when both are restricted, are
// ORed, as POSIX cron does (`0 0 1 * MON`: the 1st of each month, and every Monday).
import { Cron } from 'croner';
import type { Timing } from '../domain/schedule.ts';
import { zoneOf } from './zone.ts';
import { I64_MAX } from '../domain/time.ts';

export type { Timing };
export { zoneDatabase } from '../version.ts';

const NS_PER_MS = 1_000_000n;
const NS_PER_SECOND = 1_000_000_000n;
const CRON_OPTIONS = { paused: true, mode: '5-or-6-parts', domAndDow: false } as const;

/** null when `expr` is a cron expression this tickd reads (5 fields, or 6 with seconds first), else why not. */
export function cronError(expr: string, tz: string): string | null {
  try {
    new Cron(expr, { ...CRON_OPTIONS, timezone: zoneOf(tz) });
    return null;
  } catch (err) {
    return String((err as Error)?.message ?? err).replace(/^CronPattern: /, '');
  }
}


/** A schedule's occurrences in time: made once per schedule, asked many times. */
export class Calendar {
  private readonly t: Timing;
  private readonly cron: Parsed | null;

  constructor(t: Timing) {
    this.t = t;
    this.cron = t.cron === null ? null : cronOf(t.cron, t.tz);
  }

  /**
   * The first nominal time strictly after `afterNs` (nanoseconds), or null when none is left
   * before `end`. The last two answers are kept: a decision and the arming after it ask the
   * same question, and a step of croner's in a time zone costs about 100 µs.
   */
  after(afterNs: bigint): bigint | null {
    if (afterNs === this.asked[0]) return this.answers[0]!;
    if (afterNs === this.asked[1]) return this.answers[1]!;
    const at = this.compute(afterNs);
    this.asked[1] = this.asked[0]!;
    this.answers[1] = this.answers[0]!;
    this.asked[0] = afterNs;
    this.answers[0] = at;
    return at;
  }

  /** Tells the calendar an answer it gave before (kept elsewhere): after(afterNs) is `at`. */
  knows(afterNs: bigint, at: bigint | null): void {
    this.asked[1] = this.asked[0]!;
    this.answers[1] = this.answers[0]!;
    this.asked[0] = afterNs;
    this.answers[0] = at;
  }

  private readonly asked: Array<bigint | undefined> = [undefined, undefined];
  private readonly answers: Array<bigint | null> = [null, null];

  private compute(afterNs: bigint): bigint | null {
    const from = this.t.start !== null && afterNs < this.t.start ? this.t.start - 1n : afterNs;
    if (from >= I64_MAX) return null;
    const at = this.cron !== null ? this.cronAfter(this.cron, from) : this.intervalAfter(this.t.every!, from);
    // A time past 2262 is none: no job, record or answer can hold it (start near the end of the range).
    return at === null || at > I64_MAX || (this.t.end !== null && at >= this.t.end) ? null : at;
  }

  /** The last nominal time at or before `atNs`, or null when none is (on or after `start`). */
  atOrBefore(atNs: bigint): bigint | null {
    const last = this.t.end !== null && atNs >= this.t.end ? this.t.end - 1n : atNs;
    const at = this.cron !== null ? this.cronAtOrBefore(this.cron, last) : this.intervalAtOrBefore(this.t.every!, last);
    return at === null || (this.t.start !== null && at < this.t.start) ? null : at;
  }

  /**
   * How many nominal times fall in (afterNs, untilNs]: an interval's exactly (divided), a cron
   * expression's up to `cap` (stepped through, about 60 µs a step): `more` when there are more.
   */
  count(afterNs: bigint, untilNs: bigint, cap: number): { readonly count: number; readonly more: boolean } {
    if (this.cron === null) {
      const first = this.after(afterNs);
      const last = this.atOrBefore(untilNs);
      if (first === null || last === null || last < first) return { count: 0, more: false };
      return { count: Number((last - first) / this.t.every! + 1n), more: false };
    }
    let n = 0;
    for (let at = this.after(afterNs); at !== null && at <= untilNs; at = this.after(at)) {
      if (n === cap) return { count: cap, more: true };
      n++;
    }
    return { count: n, more: false };
  }

  /** Up to `n` nominal times after `afterNs`, in order. */
  next(afterNs: bigint, n: number): bigint[] {
    const out: bigint[] = [];
    let at: bigint | null = afterNs;
    while (out.length < n && (at = this.after(at)) !== null) out.push(at);
    return out;
  }

  private cronAfter(cron: Parsed, afterNs: bigint): bigint | null {
    // Cron times are whole seconds: croner's next run after any instant of a second is the
    // first match from the next second on, so the answer depends on that second alone, and
    // every schedule of the expression asking in that second shares it (a decision at a
    // boundary asks the same for each of them; a bulk load asks in the same few seconds).
    const second = Number(floorDiv(afterNs, NS_PER_SECOND));
    if (second === cron.second) return cron.next;
    const next = cron.cron.nextRun(new Date(second * 1000));
    cron.second = second;
    cron.next = next === null ? null : BigInt(next.getTime()) * NS_PER_MS;
    return cron.next;
  }

  private cronAtOrBefore(cron: Parsed, atNs: bigint): bigint | null {
    // croner counts a run earlier in the same second as the reference: a reference one
    // millisecond after `atNs` takes a run at `atNs` itself, and none after it.
    const ms = floorDiv(atNs, NS_PER_MS);
    const [prev] = cron.cron.previousRuns(1, new Date(Number(ms) + 1));
    return prev === undefined ? null : BigInt(prev.getTime()) * NS_PER_MS;
  }

  private intervalAtOrBefore(every: bigint, atNs: bigint): bigint {
    const anchor = this.t.start ?? 0n;
    return anchor + floorDiv(atNs - anchor, every) * every;
  }

  /** Aligned to `start` when given, else to the Unix epoch (`every 30s` falls on :00 and :30). */
  private intervalAfter(every: bigint, afterNs: bigint): bigint {
    const anchor = this.t.start ?? 0n;
    return anchor + (floorDiv(afterNs - anchor, every) + 1n) * every;
  }
}

/**
 * croner's parsed expressions, by zone and expression: a parse costs ~50 µs and ~80 KB, and
 * schedules share a few expressions (start and end are the Calendar's own, not croner's, so one
 * parsed expression serves every schedule that has it), with its last next-run answer.
 */
interface Parsed {
  readonly cron: Cron;
  /** The second (since the epoch) of the last next-run question, and its answer. */
  second: number;
  next: bigint | null;
}

const parsed = new Map<string, Parsed>();
const PARSED_KEPT = 256;

function cronOf(expr: string, tz: string): Parsed {
  const zone = zoneOf(tz);
  const key = `${zone}\0${expr}`;
  let cron = parsed.get(key);
  if (cron !== undefined) {
    parsed.delete(key); // to the end: the map's order is the order of use
  } else {
    cron = { cron: new Cron(expr, { ...CRON_OPTIONS, timezone: zone }), second: Number.NaN, next: null };
    if (parsed.size >= PARSED_KEPT) parsed.delete(parsed.keys().next().value!);
  }
  parsed.set(key, cron);
  return cron;
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && (a < 0n) !== (b < 0n) ? q - 1n : q;
}
