// Schedules as the client writes them (SCHEDULE SET's key=value options) and returns them
// (tickd-protocol(7) SCHEDULES, Fields). Writing only shapes the options: the daemon checks
// them and answers invalid_args naming the field. Reading types the fields of a schedule line
// and keeps the options as sent, in the daemon's order, for what a newer daemon may add.
import { quoteArg } from '../domain/arguments.ts';
import { formatDuration } from '../domain/duration.ts';
import type { OccurrenceView } from '../domain/schedule.ts';
import { optionOf, type ScheduleLine } from './schedule-lines.ts';
import type { Duration } from './rules.ts';
import { toNs, type When } from './time.ts';

export type Occurrence = OccurrenceView;

export interface ScheduleInput {
  /** A cron expression of 5 or 6 fields; exactly one of cron and every. */
  readonly cron?: string;
  readonly every?: Duration;
  /** An IANA zone name; UTC when not given. */
  readonly tz?: string;
  readonly start?: When;
  readonly end?: When;
  readonly limit?: number;
  readonly jitter?: Duration;
  readonly missed?: 'skip' | 'once' | 'all';
  readonly catchup?: Duration;
  readonly overlap?: 'allow' | 'skip' | 'queue';
  readonly paused?: boolean;
  readonly keep?: number;
}

export interface Schedule extends ScheduleLine {
  readonly cron: string | null;
  readonly every: string | null;
  readonly tz: string;
  readonly start: bigint | null;
  readonly end: bigint | null;
  readonly limit: number | null;
  readonly jitter: string;
  readonly missed: string;
  readonly catchup: string;
  readonly overlap: string;
  readonly paused: boolean;
  readonly keep: number;
}

const FIELDS = ['cron', 'every', 'tz', 'start', 'end', 'limit', 'jitter', 'missed', 'catchup', 'overlap', 'paused', 'keep'] as const;

function value(key: string, v: unknown): string {
  if (key === 'start' || key === 'end') return toNs(v as When).toString();
  if (typeof v === 'bigint') return formatDuration(v);
  return String(v);
}

/** SCHEDULE SET's arguments: the identifier, then one quoted key=value per field given. */
export function scheduleSetArgs(id: string, fields: ScheduleInput): string {
  const parts = [quoteArg(id)];
  for (const key of Object.keys(fields)) {
    if (!(FIELDS as readonly string[]).includes(key)) throw new TypeError(`unknown schedule field ${JSON.stringify(key)} (known: ${FIELDS.join(', ')})`);
    const v = (fields as Record<string, unknown>)[key];
    if (v !== undefined) parts.push(quoteArg(`${key}=${value(key, v)}`));
  }
  return parts.join(' ');
}

function integer(s: string | null): bigint | null {
  return s === null ? null : BigInt(s);
}

/** A schedule line's fields, typed (defaults as the protocol states them when a field is absent). */
export function toSchedule(line: ScheduleLine): Schedule {
  const limit = optionOf(line, 'limit');
  return {
    ...line,
    cron: optionOf(line, 'cron'),
    every: optionOf(line, 'every'),
    tz: optionOf(line, 'tz') ?? 'UTC',
    start: integer(optionOf(line, 'start')),
    end: integer(optionOf(line, 'end')),
    limit: limit === null ? null : Number(limit),
    jitter: optionOf(line, 'jitter') ?? '0s',
    missed: optionOf(line, 'missed') ?? 'once',
    catchup: optionOf(line, 'catchup') ?? '1h',
    overlap: optionOf(line, 'overlap') ?? 'allow',
    paused: optionOf(line, 'paused') === 'true',
    keep: Number(optionOf(line, 'keep') ?? '10'),
  };
}
