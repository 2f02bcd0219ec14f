// A rule's options (issue 38; tickd-protocol(7) RETRIES AND LIMITS): how its jobs are retried,
// how many run at once, how many start in a sliding window, and (issue 40) the node tags its
// jobs require in cluster mode. The HTTP rule object carries them as `"retry": {...}`,
// `"concurrency": N`, `"rate": {"limit": N, "per": "1s"}`, `"on": ["db", "eu"]`; RULE SET as
// `key=value` options between the pattern and the runner kind, with the same names
// (`retry.attempts=5 concurrency=4 rate.limit=10 rate.per=1s on=db,eu`); the lists, `retry.on`
// and `on`, are JSON arrays over HTTP and comma-separated over TCP (`retry.on=5xx,429,network`).
// Both are read here, into one shape, so that the two interfaces refuse the same things with
// the same words.
//
// A rule without options is exactly a rule of today: `options` is absent (never an empty
// object), so its record stays ztick's (type 1) and nothing is added to its jobs.
import { DURATION_FORM, formatDuration, parseDurationNs } from './duration.ts';
import { PLACEMENT_FORMAT, RETRIES_FORMAT, RETRY_ON_FORMAT } from './format.ts';
import { readTags } from './node-tags.ts';
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
  /** Cluster mode: the node tags a job needs, every one of them (lib/domain/node-tags.ts); 1 to MAX_TAGS, in the order given. */
  readonly on?: readonly string[];
}

export const MAX_CONCURRENCY = 100_000;
export const MAX_RATE_LIMIT = 1_000_000;
const MAX_RATE_PER = 86_400_000_000_000n;
export const RATE_FIELDS = ['limit', 'per'] as const;
/** The option names of RULE SET, in the order LISTRULES writes them. */
export const OPTION_NAMES = [...RETRY_FIELDS.map((f) => `retry.${f}`), 'concurrency', ...RATE_FIELDS.map((f) => `rate.${f}`), 'on'] as const;

export type OptionsResult = { readonly options: RuleOptions | undefined } | { readonly field: string; readonly error: string };

const refuse = (field: string, error: string): OptionsResult => ({ field, error });
/** A list option's text over TCP: comma-separated, '' the empty list (which its reader refuses). */
const listText = (value: string): string[] => (value === '' ? [] : value.split(','));

/**
 * The options of an HTTP rule object's `retry`, `concurrency`, `rate` and `on` members (JSON
 * values, each may be undefined), or the first refused and why. undefined when none is given.
 */
export function readRuleOptions(retry: unknown, concurrency: unknown, rate: unknown, on?: unknown): OptionsResult {
  const out: { retry?: RetryPolicy; concurrency?: number; rate?: RateLimit; on?: readonly string[] } = {};
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
  if (on !== undefined) {
    // An empty list would be a rule no node could ever run: anywhere is said by leaving `on` out.
    if (Array.isArray(on) && on.length === 0) return refuse('on', 'must name at least one node tag (omit it to run anywhere)');
    const tags = readTags(on);
    if ('error' in tags) return refuse('on', tags.error);
    out.on = tags.tags;
  }
  const none = out.retry === undefined && out.concurrency === undefined && out.rate === undefined && out.on === undefined;
  return { options: none ? undefined : out };
}

/**
 * RULE SET's options (`name=value` tokens, in any order, each at most once), read as the HTTP
 * members are.
 */
export function readOptionTokens(tokens: readonly string[]): OptionsResult {
  let retry: Record<string, string | string[]> | undefined;
  let rate: Record<string, string> | undefined;
  let concurrency: string | undefined;
  let on: string[] | undefined;
  const seen = new Set<string>();
  for (const token of tokens) {
    const eq = token.indexOf('=');
    const name = eq < 0 ? token : token.slice(0, eq);
    if (eq < 0 || !(OPTION_NAMES as readonly string[]).includes(name)) return refuse(name, `unknown option (known: ${OPTION_NAMES.join(', ')})`);
    if (seen.has(name)) return refuse(name, 'given twice');
    seen.add(name);
    const value = token.slice(eq + 1);
    if (name === 'concurrency') concurrency = value;
    else if (name === 'on') on = listText(value);
    else if (name === 'retry.on') (retry ??= {})['on'] = listText(value);
    else if (name.startsWith('retry.')) (retry ??= {})[name.slice(6)] = value;
    else (rate ??= {})[name.slice(5)] = value;
  }
  if (retry !== undefined && retry['attempts'] === undefined) return refuse('retry.attempts', 'is required with any other retry option');
  if (rate !== undefined && rate['limit'] === undefined) return refuse('rate.limit', 'is required with rate.per');
  return readRuleOptions(retry, concurrency, rate, on);
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
  if (options.on !== undefined) out.push(`on=${options.on.join(',')}`);
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
  if (options.on !== undefined) out['on'] = [...options.on];
  return out;
}

/**
 * The lowest logfile format whose readers read a rule with `options` (lib/domain/format.ts):
 * node tags (`on`) need PLACEMENT_FORMAT, a retry policy's `on` RETRY_ON_FORMAT, any other
 * option RETRIES_FORMAT. So a log that does not use them stays readable by older tickd.
 */
export function optionsFormat(options: RuleOptions): number {
  if (options.on !== undefined) return PLACEMENT_FORMAT;
  return options.retry?.on !== undefined ? RETRY_ON_FORMAT : RETRIES_FORMAT;
}

/** The option that makes `options` need the format optionsFormat gives, as errors name it. */
export function optionsFormatField(options: RuleOptions): string {
  if (options.on !== undefined) return 'on';
  return options.retry?.on !== undefined ? 'retry.on' : 'rule options';
}
