// A schedule (lib/schedule/README.md; issue 37): when occurrences fall, as an identifier, a cron
// expression or a fixed interval, a time zone, bounds and policies. Its occurrences are
// ordinary jobs (occurrence.ts); the rule whose pattern matches runs them.
//
// readSchedule takes the fields as HTTP gives them (JSON values) or as TCP gives them (the
// text of key=value options) and fills in every default, or names the one field it refuses.
// Nothing here knows of the engine, the log or time now.
import { validateIdentifier } from '../domain/identifier.ts';
import { I64_MAX, I64_MIN, OUT_OF_RANGE, parseTimestampToken } from '../domain/time.ts';
import { cronError } from './calendar.ts';
import { zoneError } from './zone.ts';
import { DEFAULT_KEEP, MAX_KEEP, type Schedule } from '../domain/schedule.ts';
import { DURATION_FORM, parseDurationNs } from '../domain/duration.ts';

export type { MissedPolicy, OverlapPolicy, Schedule } from '../domain/schedule.ts';

const NS_PER_MS = 1_000_000n;
const HOUR = 3_600_000_000_000n;
const DAY = 24n * HOUR;
export const SCHEDULE_DEFAULTS = {
  tz: 'UTC', jitter: 0n, missed: 'once', catchup: HOUR, overlap: 'allow', paused: false, keep: DEFAULT_KEEP,
} as const satisfies Partial<Schedule>;
/** Room left in an identifier for what an occurrence's job identifier adds (occurrence.ts). */
export const MAX_SCHEDULE_ID_BYTES = 990;
const MAX_CRON = 256;
const MAX_EVERY = 366n * DAY;
const MAX_JITTER = DAY;
const MAX_CATCHUP = 366n * DAY;
const MAX_LIMIT = 2 ** 31 - 1;
export const FIELDS = ['cron', 'every', 'tz', 'start', 'end', 'limit', 'jitter', 'missed', 'catchup', 'overlap', 'paused', 'keep'] as const;

export type ScheduleResult = { readonly schedule: Schedule } | { readonly field: string; readonly error: string };

const refuse = (field: string, error: string): ScheduleResult => ({ field, error });

/** The schedule `id` with `fields` (every default filled in), or the first field refused and why. */
export function readSchedule(id: string, fields: Readonly<Record<string, unknown>>): ScheduleResult {
  const idError = validateIdentifier('job', id)?.replace('job identifier', 'schedule identifier');
  if (idError !== undefined) return refuse('id', idError);
  if (id.length > MAX_SCHEDULE_ID_BYTES) return refuse('id', `schedule identifier too long (max ${MAX_SCHEDULE_ID_BYTES} bytes)`);
  for (const name of Object.keys(fields)) {
    if (!(FIELDS as readonly string[]).includes(name)) return refuse(name, `unknown field (known: ${FIELDS.join(', ')})`);
  }
  const has = (name: string): boolean => fields[name] !== undefined && fields[name] !== null;
  if (has('cron') === has('every')) return refuse(has('cron') ? 'every' : 'cron', 'give exactly one of cron and every');

  const tz = has('tz') ? fields['tz'] : SCHEDULE_DEFAULTS.tz;
  const tzError = zoneError(tz);
  if (tzError !== null) return refuse('tz', tzError);

  let cron: string | null = null;
  let every: bigint | null = null;
  if (has('cron')) {
    const text = fields['cron'];
    if (typeof text !== 'string' || text.trim() === '') return refuse('cron', 'must be a cron expression (5 fields, or 6 with seconds first)');
    if (text.length > MAX_CRON) return refuse('cron', `too long (max ${MAX_CRON} characters)`);
    const why = cronError(text.trim(), tz as string);
    if (why !== null) return refuse('cron', why);
    cron = text.trim();
  } else {
    const ns = duration(fields['every']);
    if (typeof ns === 'string') return refuse('every', ns);
    if (ns < 1_000n * NS_PER_MS || ns > MAX_EVERY) return refuse('every', 'must be from 1s to 366d');
    every = ns;
  }

  const start = has('start') ? instant(fields['start']) : null;
  if (typeof start === 'string') return refuse('start', start);
  const end = has('end') ? instant(fields['end']) : null;
  if (typeof end === 'string') return refuse('end', end);
  if (start !== null && end !== null && end <= start) return refuse('end', 'must be after start');

  let limit: number | null = null;
  if (has('limit')) {
    const n = typeof fields['limit'] === 'string' && /^[0-9]{1,10}$/.test(fields['limit']) ? Number(fields['limit']) : fields['limit'];
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_LIMIT) return refuse('limit', `must be an integer from 1 to ${MAX_LIMIT}`);
    limit = n;
  }

  const jitter = has('jitter') ? duration(fields['jitter']) : SCHEDULE_DEFAULTS.jitter;
  if (typeof jitter === 'string') return refuse('jitter', jitter);
  if (jitter > MAX_JITTER) return refuse('jitter', 'must be at most 1d');
  if (every !== null && jitter >= every) return refuse('jitter', 'must be shorter than every, so that occurrences stay in order');

  const catchup = has('catchup') ? duration(fields['catchup']) : SCHEDULE_DEFAULTS.catchup;
  if (typeof catchup === 'string') return refuse('catchup', catchup);
  if (catchup <= 0n || catchup > MAX_CATCHUP) return refuse('catchup', 'must be more than 0s and at most 366d');

  const missed = has('missed') ? fields['missed'] : SCHEDULE_DEFAULTS.missed;
  if (missed !== 'skip' && missed !== 'once' && missed !== 'all') return refuse('missed', 'must be skip, once or all');
  const overlap = has('overlap') ? fields['overlap'] : SCHEDULE_DEFAULTS.overlap;
  if (overlap !== 'allow' && overlap !== 'skip' && overlap !== 'queue') return refuse('overlap', 'must be allow, skip or queue');
  const paused = has('paused') ? flag(fields['paused']) : SCHEDULE_DEFAULTS.paused;
  if (paused === null) return refuse('paused', 'must be true or false');

  let keep: number = SCHEDULE_DEFAULTS.keep;
  if (has('keep')) {
    const n = typeof fields['keep'] === 'string' && /^[0-9]{1,4}$/.test(fields['keep']) ? Number(fields['keep']) : fields['keep'];
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > MAX_KEEP) return refuse('keep', `must be an integer from 0 to ${MAX_KEEP}`);
    keep = n;
  }

  return { schedule: { id, cron, every, tz: tz as string, start, end, limit, jitter, missed, catchup, overlap, paused, keep } };
}

function duration(v: unknown): bigint | string {
  const ns = typeof v === 'string' && v.length <= 64 ? parseDurationNs(v) : null;
  return ns ?? `not ${DURATION_FORM}`;
}

function instant(v: unknown): bigint | string {
  // JSON integers arrive as bigints of any size (the HTTP body's exact integers): the same range as TCP's.
  if (typeof v === 'bigint') return v >= I64_MIN && v <= I64_MAX ? v : OUT_OF_RANGE;
  if (typeof v === 'number') return Number.isSafeInteger(v) ? BigInt(v) : 'must be integer nanoseconds (as a string beyond 2^53) or an RFC 3339 time';
  if (typeof v !== 'string') return 'must be integer nanoseconds or an RFC 3339 time with a zone';
  return parseTimestampToken(v);
}

function flag(v: unknown): boolean | null {
  if (v === true || v === 'true') return true;
  if (v === false || v === 'false') return false;
  return null;
}

