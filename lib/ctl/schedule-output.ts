// How `tickd ctl sched` prints schedules, previews and histories (tickd-ctl(1) OUTPUT). Pure:
// strings in, strings out, in the conventions of output.ts.
//
// - table: instants as RFC 3339 in UTC with all nine fraction digits (formatTime), as jobs'.
//   One schedule is a FIELD VALUE table holding every option (the listing has room for the
//   few that say when it runs and how it went). A preview adds each instant as the wall clock
//   of the schedule's zone with its offset, which is what a user checks a DST change against.
// - json: the shapes of the HTTP interface (tickd-protocol(7) HTTP INTERFACE): a schedule is
//   {"id","cron","every","tz","start","end","limit","jitter","missed","catchup","overlap",
//   "paused","keep","next","fired","skipped":{"missed","overlap"}}, an occurrence
//   {"nominal","job","outcome","reason"?,"from"?,"count"?,"manual"?}; integers exact.
import type { OccurrenceView } from '../domain/schedule.ts';
import { toJson, type JsonValue } from '../http/json.ts';
import { formatTime } from './output.ts';
import { INTEGER_OPTIONS, optionOf, type ScheduleLine } from '../client/schedule-lines.ts';

export const SCHEDULE_HEADER = ['ID', 'SPEC', 'TZ', 'NEXT', 'PAUSED', 'FIRED', 'SKIPPED'] as const;
export const FIELD_HEADER = ['FIELD', 'VALUE'] as const;
export const NEXT_HEADER = ['NEXT', 'LOCAL'] as const;
export const HISTORY_HEADER = ['NOMINAL', 'OUTCOME', 'JOB', 'REASON'] as const;

const NS_PER_MS = 1_000_000n;
const NS_PER_S = 1_000_000_000n;
/** The options the JSON always has, in the HTTP order (null when unset); others follow as sent. */
const JSON_OPTIONS = ['cron', 'every', 'tz', 'start', 'end', 'limit', 'jitter', 'missed', 'catchup', 'overlap', 'paused', 'keep'];

/** `cron` as its expression, `every` as `every 30s`. */
export function specText(s: ScheduleLine): string {
  const cron = optionOf(s, 'cron');
  return cron !== null ? cron : `every ${optionOf(s, 'every') ?? '?'}`;
}

function instantText(ns: bigint | null, none: string): string {
  return ns === null ? none : formatTime(ns);
}

/** A row of `sched ls`: skips of both reasons added up (the JSON and `sched get` tell them apart). */
export function scheduleCells(s: ScheduleLine): string[] {
  return [
    s.id, specText(s), optionOf(s, 'tz') ?? '', instantText(s.next, 'none'), optionOf(s, 'paused') ?? 'false',
    String(s.fired), String(s.skippedMissed + s.skippedOverlap),
  ];
}

/** The rows of one schedule: every option under its protocol name, instants as times, then the counters. */
export function scheduleRows(s: ScheduleLine): string[][] {
  const rows: string[][] = [['id', s.id]];
  for (const [key, value] of s.options) {
    rows.push([key, (key === 'start' || key === 'end') ? formatTime(BigInt(value)) : value]);
  }
  rows.push(
    ['next', instantText(s.next, 'none')],
    ['fired', String(s.fired)],
    ['skipped_missed', String(s.skippedMissed)],
    ['skipped_overlap', String(s.skippedOverlap)],
  );
  return rows;
}

function optionJson(key: string, value: string | null): JsonValue {
  if (value === null) return null;
  if (INTEGER_OPTIONS.includes(key)) return BigInt(value);
  if (key === 'paused') return value === 'true';
  return value;
}

/** The schedule as the HTTP interface writes it; `job` for a run now. */
export function scheduleJson(s: ScheduleLine, job?: string): string {
  const doc: Record<string, JsonValue> = { id: s.id };
  for (const key of JSON_OPTIONS) doc[key] = optionJson(key, optionOf(s, key));
  for (const [key, value] of s.options) if (!JSON_OPTIONS.includes(key)) doc[key] = value;
  doc['next'] = s.next;
  doc['fired'] = s.fired;
  doc['skipped'] = { missed: s.skippedMissed, overlap: s.skippedOverlap };
  if (job !== undefined) doc['job'] = job;
  return toJson(doc);
}

/**
 * `ns` as the wall clock of the IANA zone `tz` with its offset, nine fraction digits
 * (`2026-03-29T03:30:00.000000000+02:00`); null when this machine's zone database does not
 * know the zone or the instant is outside what it can place.
 */
export function localTime(ns: bigint, tz: string): string | null {
  let name: string | undefined;
  try {
    const ms = ns >= 0n ? ns / NS_PER_MS : -((-ns + NS_PER_MS - 1n) / NS_PER_MS);
    const parts = new Intl.DateTimeFormat('en-US', { timeZone: tz, timeZoneName: 'longOffset' }).formatToParts(new Date(Number(ms)));
    name = parts.find((p) => p.type === 'timeZoneName')?.value;
  } catch {
    return null;
  }
  const m = name === undefined ? null : /^GMT(?:([+-])(\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(name);
  if (m === null) return null;
  const sign = m[1] === '-' ? -1n : 1n;
  const seconds = BigInt(m[2] ?? '0') * 3600n + BigInt(m[3] ?? '0') * 60n + BigInt(m[4] ?? '0');
  const suffix = m[1] === undefined ? '+00:00' : `${m[1]}${m[2]}:${m[3]}${m[4] === undefined ? '' : `:${m[4]}`}`;
  return `${formatTime(ns + sign * seconds * NS_PER_S).slice(0, -1)}${suffix}`;
}

export function nextCells(ns: bigint, tz: string | null): string[] {
  return [formatTime(ns), (tz === null ? null : localTime(ns, tz)) ?? '-'];
}

/** What REASON says: a skip's reason, with its range when it holds more than one; `manual` for a run now. */
export function reasonText(o: OccurrenceView): string {
  const parts: string[] = [];
  if (o.reason !== undefined) {
    parts.push(o.count !== undefined && o.count > 1 && o.from !== undefined ? `${o.reason} (${o.count} from ${formatTime(o.from)})` : o.reason);
  }
  if (o.manual === true) parts.push('manual');
  return parts.join(', ');
}

export function historyCells(o: OccurrenceView): string[] {
  return [formatTime(o.nominal), o.outcome, o.job ?? '-', reasonText(o)];
}

export function historyJson(o: OccurrenceView): string {
  return toJson({ nominal: o.nominal, job: o.job, outcome: o.outcome, reason: o.reason, from: o.from, count: o.count, manual: o.manual });
}
