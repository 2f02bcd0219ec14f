// A schedule's fields as text, in one canonical order (tickd-protocol(7) SCHEDULES): the
// `key=value` options of a TCP `SCHEDULE SET` line, of its replies and of `tickd dump`, and the
// values of the HTTP answer. Durations are written as durations (`30s`, `1h30m`), instants as
// integer nanoseconds, so that every line reads back through readSchedule (spec.ts) to the
// same schedule.
import type { Schedule } from '../domain/schedule.ts';
import { formatDuration } from '../domain/duration.ts';

/** The value of each field (null: not set), in the canonical order; `cron` or `every`, never both. */
export function scheduleFields(s: Schedule): Array<[string, string | number | boolean | bigint | null]> {
  return [
    s.cron !== null ? ['cron', s.cron] : ['every', formatDuration(s.every!)],
    ['tz', s.tz],
    ['start', s.start],
    ['end', s.end],
    ['limit', s.limit],
    ['jitter', formatDuration(s.jitter)],
    ['missed', s.missed],
    ['catchup', formatDuration(s.catchup)],
    ['overlap', s.overlap],
    ['paused', s.paused],
    ['keep', s.keep],
  ];
}

/** The set fields as `key=value` pairs of text (unset ones left out): what SCHEDULE SET takes back. */
export function scheduleOptionPairs(s: Schedule): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const [name, value] of scheduleFields(s)) if (value !== null) out.push([name, String(value)]);
  return out;
}
