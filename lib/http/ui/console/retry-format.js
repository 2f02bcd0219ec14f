// Pure helpers of the console's retries and limits (no DOM):
// tickd-protocol(7) RETRIES AND LIMITS. A rule's retry, concurrency and rate on one line each,
// the rule form's option inputs to and from the HTTP rule object, and a job's attempt number
// and attempt history entries (the job detail). Invariants: values go to the API as typed ("abc" attempts is
// sent as "abc"), so the API decides what is valid and its message is the one shown; a group
// the form leaves empty is left out, so a rule saved without options has none; Edit fills
// every input from the rule (and empties those it lacks), so Save gives the options back.
// `on` (the failure classes retried) is one text input, the classes comma-separated; so is
// `tags`, the rule's own `on` (the node tags its jobs require in cluster mode).
import { formatNs } from './format.js';

/** The option inputs of the rule form, by name (the ids are `rule-opt-<name>`). */
export const OPTION_INPUTS = ['attempts', 'backoff', 'delay', 'factor', 'max_delay', 'jitter', 'on', 'concurrency', 'rate_limit', 'rate_per', 'tags'];
const RETRY_INPUTS = ['attempts', 'backoff', 'delay', 'factor', 'max_delay', 'jitter', 'on'];

const present = (v) => v !== undefined && v !== null;
const text = (v) => String(v ?? '').trim();
/** A comma-separated input as the API's list, each entry trimmed (an empty one is the API's to refuse). */
const list = (value) => value.split(',').map((c) => c.trim());

/** An integer as JSON wants it: a number when it is plain digits, else the text as typed. */
function integerOrText(value) {
  return /^[0-9]{1,9}$/.test(value) ? Number(value) : value;
}

/** A fraction (factor, jitter) as a JSON number when it is written as one, else the text as typed. */
function decimalOrText(value) {
  return value.length <= 32 && /^[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?$/i.test(value) ? Number(value) : value;
}

/**
 * "5 attempts · exponential 1s ×2 (max 1h) · jitter 0.1", "3 attempts · fixed 2s (max 1h) · on
 * 5xx, 404", "1 attempt (no retry)": a retry policy as GET /rules writes it, on one line.
 */
export function retryText(retry) {
  if (retry === null || typeof retry !== 'object') return String(retry);
  const n = String(retry.attempts ?? '?');
  if (n === '1') return '1 attempt (no retry)';
  const parts = [`${n} attempts`];
  const max = present(retry.max_delay) ? ` (max ${retry.max_delay})` : '';
  if (retry.backoff === 'fixed') parts.push(`fixed ${retry.delay ?? '?'}${max}`);
  else parts.push(`${retry.backoff ?? 'exponential'} ${retry.delay ?? '?'} ×${retry.factor ?? 2}${max}`);
  if (present(retry.jitter) && Number(retry.jitter) !== 0) parts.push(`jitter ${retry.jitter}`);
  if (Array.isArray(retry.on)) parts.push(`on ${retry.on.join(', ')}`);
  return parts.join(' · ');
}

/** A rule's options as [field, label, value] triples for the rules list; none without options. */
export function optionDetails(rule) {
  const out = [];
  if (present(rule?.retry)) out.push(['retry', 'retry', retryText(rule.retry)]);
  if (present(rule?.concurrency)) out.push(['concurrency', 'concurrency', String(rule.concurrency)]);
  if (present(rule?.rate)) out.push(['rate', 'rate', `${rule.rate.limit ?? '?'} per ${rule.rate.per ?? '?'}`]);
  if (Array.isArray(rule?.on)) out.push(['on', 'on nodes tagged', rule.on.join(', ')]);
  return out;
}

/** The option inputs' values for a rule (Edit): '' for what the rule does not have. */
export function optionFormValues(rule) {
  const r = present(rule?.retry) ? rule.retry : {};
  const rate = present(rule?.rate) ? rule.rate : {};
  const s = (v) => (present(v) ? String(v) : '');
  return {
    attempts: s(r.attempts), backoff: s(r.backoff), delay: s(r.delay),
    // The API writes the factor of exponential backoff only; 2 is its default.
    factor: r.backoff === 'fixed' ? '' : s(r.factor), max_delay: s(r.max_delay), jitter: s(r.jitter),
    on: Array.isArray(r.on) ? r.on.join(',') : '',
    concurrency: s(rule?.concurrency), rate_limit: s(rate.limit), rate_per: s(rate.per),
    tags: Array.isArray(rule?.on) ? rule.on.join(',') : '',
  };
}

/**
 * The `retry`, `concurrency`, `rate` and `on` members of PUT /rules/{id} for the option inputs
 * (strings as typed; backoff '' is the server's default). A group is sent when any of its
 * inputs is filled, with only the filled ones; the factor only with a backoff that has one;
 * `on` as the list of its comma-separated classes; the `tags` input as the rule's `on`, a list too.
 */
export function optionsBody(form) {
  const body = {};
  const retry = {};
  for (const name of RETRY_INPUTS) {
    const value = text(form[name]);
    if (value === '' || (name === 'factor' && text(form.backoff) === 'fixed')) continue;
    retry[name] = name === 'attempts' ? integerOrText(value) : name === 'factor' || name === 'jitter' ? decimalOrText(value)
      : name === 'on' ? list(value) : value;
  }
  if (Object.keys(retry).length > 0) body.retry = retry;
  if (text(form.concurrency) !== '') body.concurrency = integerOrText(text(form.concurrency));
  const limit = text(form.rate_limit);
  const per = text(form.rate_per);
  if (limit !== '' || per !== '') {
    body.rate = {};
    if (limit !== '') body.rate.limit = integerOrText(limit);
    if (per !== '') body.rate.per = per;
  }
  if (text(form.tags) !== '') body.on = list(text(form.tags));
  return body;
}

/** A job's attempt number with what it means: "0 (not run yet)" before the first. */
export function attemptText(job) {
  const n = present(job?.attempt) ? String(job.attempt) : '?';
  return n === '0' ? '0 (not run yet)' : n;
}

/** One entry of GET /jobs/{id}/attempts as the history table's cells (durations made short). */
export function attemptCells(a) {
  return {
    attempt: String(a?.attempt ?? '?'),
    lateness: formatNs(a?.lateness_ns ?? '?'),
    held: formatNs(a?.held_ns ?? '0'),
    duration: formatNs(a?.duration_ns ?? '?'),
    summary: String(a?.summary ?? ''),
    success: a?.success === true || a?.success === 'true',
  };
}
