// A rule's options (issue 38; tickd-protocol(7) RETRIES AND LIMITS): how its jobs are retried,
// how many run at once, how many start in a sliding window. The HTTP rule object carries them
// as `"retry": {...}`, `"concurrency": N`, `"rate": {"limit": N, "per": "1s"}`; RULE SET as
// `key=value` options between the pattern and the runner kind, with the same names
// (`retry.attempts=5 concurrency=4 rate.limit=10 rate.per=1s`); the one list, `retry.on`, is
// a JSON array over HTTP and comma-separated over TCP (`retry.on=5xx,429,network`). Both are
// read here, into one shape, so that the two interfaces refuse the same things with the same
// words.
//
// A rule without options is exactly a rule of today: `options` is absent (never an empty
// object), so its record stays ztick's (type 1) and nothing is added to its jobs.
import { DURATION_FORM, formatDuration, parseDurationNs } from './duration.ts';
import { RETRIES_FORMAT, RETRY_ON_FORMAT } from './format.ts';
import { readInteger, readRetry, RETRY_FIELDS, type RetryPolicy } from './retry-policy.ts';
import { retryClassText } from './retry-on.ts';

export interface RateLimit {
  readonly limit: number;
  /** The window's length, nanoseconds. */
  readonly per: bigint;
}

export interface RuleOptions {
  readonly retry?: RetryPolicy;
  /** At most this many executions of the rule's jobs at once. */
  readonly concurrency?: number;
  readonly rate?: RateLimit;
}

export const MAX_CONCURRENCY = 100_000;
export const MAX_RATE_LIMIT = 1_000_000;
const MAX_RATE_PER = 86_400_000_000_000n;
export const RATE_FIELDS = ['limit', 'per'] as const;
/** The option names of RULE SET, in the order LISTRULES writes them. */
export const OPTION_NAMES = [...RETRY_FIELDS.map((f) => `retry.${f}`), 'concurrency', ...RATE_FIELDS.map((f) => `rate.${f}`)] as const;

export type OptionsResult = { readonly options: RuleOptions | undefined } | { readonly field: string; readonly error: string };

const refuse = (field: string, error: string): OptionsResult => ({ field, error });

/**
 * The options of an HTTP rule object's `retry`, `concurrency` and `rate` members (JSON values,
 * each may be undefined), or the first refused and why. undefined when none is given.
 */
export function readRuleOptions(retry: unknown, concurrency: unknown, rate: unknown): OptionsResult {
  const out: { retry?: RetryPolicy; concurrency?: number; rate?: RateLimit } = {};
  if (retry !== undefined) {
    if (typeof retry !== 'object' || retry === null || Array.isArray(retry)) return refuse('retry', 'must be an object');
    const r = readRetry(retry as Record<string, unknown>);
    if ('field' in r) return r;
    out.retry = r.policy;
  }
  if (concurrency !== undefined) {
    const n = readInteger(concurrency);
    if (n === null || n < 1 || n > MAX_CONCURRENCY) return refuse('concurrency', `must be an integer from 1 to ${MAX_CONCURRENCY}`);
    out.concurrency = n;
  }
  if (rate !== undefined) {
    if (typeof rate !== 'object' || rate === null || Array.isArray(rate)) return refuse('rate', 'must be an object with limit and per');
    const fields = rate as Record<string, unknown>;
    for (const name of Object.keys(fields)) {
      if (!(RATE_FIELDS as readonly string[]).includes(name)) return refuse(`rate.${name}`, `unknown field (known: ${RATE_FIELDS.join(', ')})`);
    }
    const limit = readInteger(fields['limit']);
    if (limit === null || limit < 1 || limit > MAX_RATE_LIMIT) return refuse('rate.limit', `must be an integer from 1 to ${MAX_RATE_LIMIT}`);
    const perText = fields['per'];
    if (perText === undefined) return refuse('rate.per', 'is required with rate.limit');
    const per = typeof perText === 'string' && perText.length <= 64 ? parseDurationNs(perText) : null;
    if (per === null) return refuse('rate.per', `not ${DURATION_FORM}`);
    if (per < 1_000_000n || per > MAX_RATE_PER) return refuse('rate.per', `must be from 1ms to ${formatDuration(MAX_RATE_PER)}`);
    out.rate = { limit, per };
  }
  return { options: out.retry === undefined && out.concurrency === undefined && out.rate === undefined ? undefined : out };
}

/**
 * RULE SET's options (`name=value` tokens, in any order, each at most once), read as the HTTP
 * members are.
 */
export function readOptionTokens(tokens: readonly string[]): OptionsResult {
  let retry: Record<string, string | string[]> | undefined;
  let rate: Record<string, string> | undefined;
  let concurrency: string | undefined;
  const seen = new Set<string>();
  for (const token of tokens) {
    const eq = token.indexOf('=');
    const name = eq < 0 ? token : token.slice(0, eq);
    if (eq < 0 || !(OPTION_NAMES as readonly string[]).includes(name)) return refuse(name, `unknown option (known: ${OPTION_NAMES.join(', ')})`);
    if (seen.has(name)) return refuse(name, 'given twice');
    seen.add(name);
    const value = token.slice(eq + 1);
    if (name === 'concurrency') concurrency = value;
    else if (name === 'retry.on') (retry ??= {})['on'] = value === '' ? [] : value.split(',');
    else if (name.startsWith('retry.')) (retry ??= {})[name.slice(6)] = value;
    else (rate ??= {})[name.slice(5)] = value;
  }
  if (retry !== undefined && retry['attempts'] === undefined) return refuse('retry.attempts', 'is required with any other retry option');
  if (rate !== undefined && rate['limit'] === undefined) return refuse('rate.limit', 'is required with rate.per');
  return readRuleOptions(retry, concurrency, rate);
}

/**
 * RULE SET's option tokens for `options` (LISTRULES), in OPTION_NAMES order. Backoff and
 * max_delay are always written (max_delay's default depends on the delay), factor only for
 * exponential backoff, delay and jitter only when they matter, `on` only when set (its classes
 * in the order given): the tokens read back as the same options.
 */
export function optionTokens(options: RuleOptions | undefined): string[] {
  if (options === undefined) return [];
  const out: string[] = [];
  const r = options.retry;
  if (r !== undefined) {
    out.push(`retry.attempts=${r.attempts}`);
    out.push(`retry.backoff=${r.backoff}`);
    if (r.attempts > 1 || r.delay > 0n) out.push(`retry.delay=${formatDuration(r.delay)}`);
    if (r.backoff === 'exponential') out.push(`retry.factor=${r.factor}`);
    out.push(`retry.max_delay=${formatDuration(r.maxDelay)}`);
    if (r.jitter > 0) out.push(`retry.jitter=${r.jitter}`);
    if (r.on !== undefined) out.push(`retry.on=${r.on.map(retryClassText).join(',')}`);
  }
  if (options.concurrency !== undefined) out.push(`concurrency=${options.concurrency}`);
  if (options.rate !== undefined) out.push(`rate.limit=${options.rate.limit}`, `rate.per=${formatDuration(options.rate.per)}`);
  return out;
}

/** The HTTP rule object's members for `options` (every retry field written out; `on` only when set). */
export function optionsToJson(options: RuleOptions | undefined): Record<string, unknown> {
  if (options === undefined) return {};
  const out: Record<string, unknown> = {};
  const r = options.retry;
  if (r !== undefined) {
    out['retry'] = {
      attempts: r.attempts, backoff: r.backoff, delay: formatDuration(r.delay),
      ...(r.backoff === 'exponential' ? { factor: r.factor } : {}), max_delay: formatDuration(r.maxDelay), jitter: r.jitter,
      ...(r.on !== undefined ? { on: r.on.map(retryClassText) } : {}),
    };
  }
  if (options.concurrency !== undefined) out['concurrency'] = options.concurrency;
  if (options.rate !== undefined) out['rate'] = { limit: options.rate.limit, per: formatDuration(options.rate.per) };
  return out;
}

/**
 * The lowest logfile format whose readers read a rule with `options` (lib/domain/format.ts): a
 * retry policy's `on` needs RETRY_ON_FORMAT, any other option RETRIES_FORMAT. So a log that
 * does not use `on` stays readable by a tickd of format 4.
 */
export function optionsFormat(options: RuleOptions): number {
  return options.retry?.on !== undefined ? RETRY_ON_FORMAT : RETRIES_FORMAT;
}
