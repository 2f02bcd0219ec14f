// Pure helpers of the console's schedules view (no DOM): a schedule's spec and counts on one
// line, what an entry of its history means, and the schedule form's request body (PUT
// /schedules/{id}) and values (Edit). Invariants: values go to the API as typed (a limit
// "abc" is sent as "abc"), so the API decides what is valid and its message is the one shown;
// only what the form leaves empty is left out, for the API's own default to apply.
import { nsToIso } from './format.js';

/** The schedule's fields the form does not show: an Edit then Save keeps them as they were. */
export const KEPT_FIELDS = ['start', 'end', 'catchup', 'paused'];

const present = (v) => v !== undefined && v !== null;

/** "every 1s", "cron 0 30 2 * * *"; "?" for a schedule with neither. */
export function specText(schedule) {
  if (present(schedule?.cron)) return `cron ${schedule.cron}`;
  if (present(schedule?.every)) return `every ${schedule.every}`;
  return '?';
}

/**
 * Why a schedule has no next run (its `next` is null): paused, its limit reached, or its end
 * (or its calendar) has no occurrence left.
 */
export function noNextText(schedule) {
  if (schedule?.paused === true || schedule?.paused === 'true') return 'none while paused';
  if (present(schedule?.limit) && present(schedule?.fired) && BigInt(schedule.fired) >= BigInt(schedule.limit)) return 'none (limit reached)';
  return 'none (ended)';
}

/** "3 fired · skipped: 1 missed, 0 overlap" from a schedule's counters. */
export function countsText(schedule) {
  const n = (v) => (present(v) ? String(v) : '?');
  return `${n(schedule?.fired)} fired · skipped: ${n(schedule?.skipped?.missed)} missed, ${n(schedule?.skipped?.overlap)} overlap`;
}

/**
 * What an entry of GET /schedules/{id}/occurrences means beyond its outcome: a skip's reason
 * and range, a manual run, a held or removed occurrence; '' when the outcome says it all.
 */
export function occurrenceNote(o) {
  const parts = [];
  if (o?.outcome === 'skipped') {
    const why = o.reason === 'missed' ? 'missed (the daemon was not running or the schedule was paused)'
      : o.reason === 'overlap' ? 'overlap (the previous occurrence was still running)' : String(o.reason ?? 'unknown reason');
    parts.push(`skipped: ${why}`);
    const count = present(o.count) ? String(o.count) : '1';
    if (count !== '1') parts.push(`${count} occurrences from ${nsToIso(o.from) ?? String(o.from)}`);
  }
  if (o?.outcome === 'held') parts.push('held until the running occurrence ends (overlap queue)');
  if (o?.outcome === 'removed') parts.push('its job is gone (removed, or dropped by keep)');
  if (o?.manual === true || o?.manual === 'true') parts.push('run now (manual)');
  return parts.join('; ');
}

/** An integer field as JSON wants it: a number when it is plain digits, else the text as typed. */
function integerOrText(text) {
  return /^[0-9]{1,9}$/.test(text) ? Number(text) : text;
}

/**
 * The body of PUT /schedules/{id} for the form's values: { kind ('cron'|'every'), spec, tz,
 * missed, overlap, jitter, limit, keep } (strings, as typed), and `kept` (fields of the
 * schedule being edited that the form does not show, or null).
 */
export function scheduleBody(form, kept = null) {
  const text = (v) => String(v ?? '').trim();
  const body = {};
  if (form.kind === 'cron') body.cron = text(form.spec);
  else body.every = text(form.spec);
  for (const name of ['tz', 'missed', 'overlap', 'jitter']) {
    if (text(form[name]) !== '') body[name] = text(form[name]);
  }
  for (const name of ['limit', 'keep']) {
    if (text(form[name]) !== '') body[name] = integerOrText(text(form[name]));
  }
  for (const name of KEPT_FIELDS) {
    if (kept !== null && present(kept[name])) body[name] = kept[name];
  }
  return body;
}

/** The form's values for a schedule from the API (Edit): the inverse of scheduleBody. */
export function scheduleFormValues(schedule) {
  const text = (v) => (present(v) ? String(v) : '');
  const cron = present(schedule.cron);
  return {
    kind: cron ? 'cron' : 'every',
    spec: text(cron ? schedule.cron : schedule.every),
    tz: text(schedule.tz), missed: text(schedule.missed), overlap: text(schedule.overlap),
    jitter: text(schedule.jitter), limit: text(schedule.limit), keep: text(schedule.keep),
  };
}

/** The fields of `schedule` the form does not show, as the API wrote them (integers as exact strings). */
export function keptFields(schedule) {
  return Object.fromEntries(KEPT_FIELDS.filter((name) => present(schedule?.[name])).map((name) => [name, schedule[name]]));
}
