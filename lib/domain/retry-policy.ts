// A rule's retry policy (issue 38; the HTTP shape `"retry": {"attempts", "backoff", "delay",
// "factor", "max_delay", "jitter", "on"}`): reading it, the delay before each next attempt, and
// which outcomes are worth another attempt (the classes of `on`, retry-on.ts). Pure: the
// engine persists the attempt number and the next attempt's time, and asks here only for
// durations and decisions.
//
// - `attempts` counts every run, the first included: 1 means no retry.
// - The delay of attempt k+1 is counted from the end of attempt k. `fixed`: always `delay`;
//   `exponential`: delay x factor^(k-1), at most `max_delay`. `jitter` (a fraction of the delay,
//   0 to 1) moves it by up to that fraction either way, drawn once per attempt (the engine keeps
//   the time it drew), never beyond `max_delay`.
// - A Retry-After header (HTTP 429 and 503) replaces the computed delay when it is longer, still
//   capped by `max_delay`: the receiver knows when it will be back. It applies only when `on`
//   retries that response: it says when to come back, not whether to.
import type { AttemptOutcome } from './attempt.ts';
import { DURATION_FORM, formatDuration, parseDurationNs } from './duration.ts';
import { DEFAULT_RETRY_ON, inRetryClasses, readRetryOn, type RetryClass } from './retry-on.ts';

export type Backoff = 'fixed' | 'exponential';

export interface RetryPolicy {
  readonly attempts: number;
  readonly backoff: Backoff;
  readonly delay: bigint;
  /** exponential only; 2 unless given. */
  readonly factor: number;
  readonly maxDelay: bigint;
  /** 0 to 1: a fraction of the delay. */
  readonly jitter: number;
  /** The failure classes retried, as given; absent: DEFAULT_RETRY_ON (and the member is left out, never undefined). */
  readonly on?: readonly RetryClass[];
}

export const MAX_ATTEMPTS = 1000;
const MAX_FACTOR = 100;
const DAY = 86_400_000_000_000n;
const MAX_DELAY = 7n * DAY;
/** What `max_delay` is when not given: an hour, as most peers cap theirs. */
export const DEFAULT_MAX_DELAY = 3_600_000_000_000n;
export const RETRY_FIELDS = ['attempts', 'backoff', 'delay', 'factor', 'max_delay', 'jitter', 'on'] as const;

export type PolicyResult = { readonly policy: RetryPolicy } | { readonly field: string; readonly error: string };

const refuse = (field: string, error: string): PolicyResult => ({ field: `retry.${field}`, error });

/**
 * The policy an HTTP `retry` object (JSON values) or TCP `retry.<name>=<text>` options describe,
 * or the first field refused and why (named `retry.<field>`).
 */
export function readRetry(fields: Readonly<Record<string, unknown>>): PolicyResult {
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) return { field: 'retry', error: 'must be an object' };
  for (const name of Object.keys(fields)) {
    if (!(RETRY_FIELDS as readonly string[]).includes(name)) return refuse(name, `unknown field (known: ${RETRY_FIELDS.join(', ')})`);
  }
  const attempts = readInteger(fields['attempts']);
  if (attempts === null || attempts < 1 || attempts > MAX_ATTEMPTS) return refuse('attempts', `must be an integer from 1 to ${MAX_ATTEMPTS} (every run counts, the first included)`);
  const backoff = fields['backoff'] ?? 'exponential';
  if (backoff !== 'fixed' && backoff !== 'exponential') return refuse('backoff', 'must be fixed or exponential');
  if (fields['delay'] === undefined) {
    if (attempts > 1) return refuse('delay', 'is required when attempts is more than 1');
  }
  const delay = fields['delay'] === undefined ? 0n : duration(fields['delay']);
  if (typeof delay === 'string') return refuse('delay', delay);
  if (delay > MAX_DELAY) return refuse('delay', `must be at most ${formatDuration(MAX_DELAY)}`);
  const maxDelay = fields['max_delay'] === undefined ? (delay > DEFAULT_MAX_DELAY ? delay : DEFAULT_MAX_DELAY) : duration(fields['max_delay']);
  if (typeof maxDelay === 'string') return refuse('max_delay', maxDelay);
  if (maxDelay < delay || maxDelay > MAX_DELAY) return refuse('max_delay', `must be from delay to ${formatDuration(MAX_DELAY)}`);
  if (fields['factor'] !== undefined && backoff === 'fixed') return refuse('factor', 'applies to exponential backoff only');
  const factor = fields['factor'] === undefined ? 2 : number(fields['factor']);
  if (factor === null || factor < 1 || factor > MAX_FACTOR) return refuse('factor', `must be a number from 1 to ${MAX_FACTOR}`);
  const jitter = fields['jitter'] === undefined ? 0 : number(fields['jitter']);
  if (jitter === null || jitter < 0 || jitter > 1) return refuse('jitter', 'must be a number from 0 to 1 (a fraction of the delay)');
  const policy = { attempts, backoff, delay, factor, maxDelay, jitter } as const;
  if (fields['on'] === undefined) return { policy };
  const on = readRetryOn(fields['on']);
  return typeof on === 'string' ? refuse('on', on) : { policy: { ...policy, on } };
}

/**
 * How long after attempt `k` (1 for the first run) ended the next one starts: the backoff,
 * moved by jitter (`unit`: a draw in [0, 1), the engine's), or a longer Retry-After, all capped
 * by max_delay. Null when `k` was the last attempt.
 */
export function delayAfter(p: RetryPolicy, k: number, unit: number, retryAfterNs: bigint | null = null): bigint | null {
  if (k >= p.attempts) return null;
  let base = p.delay;
  if (p.backoff === 'exponential') {
    // In floating point, then capped: factor^(k-1) overflows nothing that matters once over the cap.
    const scaled = Number(p.delay) * p.factor ** (k - 1);
    base = scaled >= Number(p.maxDelay) ? p.maxDelay : BigInt(Math.round(scaled));
  }
  let delay = base;
  if (p.jitter > 0) delay = base + BigInt(Math.round(Number(base) * p.jitter * (2 * unit - 1)));
  if (retryAfterNs !== null && retryAfterNs > delay) delay = retryAfterNs;
  if (delay > p.maxDelay) delay = p.maxDelay;
  return delay < 0n ? 0n : delay;
}

/**
 * Whether a failed attempt is worth another under a policy whose `on` is `on`: its outcome is in
 * one of those classes, or without `on` in DEFAULT_RETRY_ON (a process that exited non-zero or
 * was killed; HTTP 5xx, 429 and 408, and no response at all, but not another 4xx: the request
 * itself is wrong, sending it again changes nothing; a broker's error; a runner that could not
 * run, or in cluster mode no node with the rule's tags). Never a process that could not be started (a missing or not executable file is a rule
 * to fix), nor a job no rule matched: no class holds them.
 */
export function worthRetrying(o: AttemptOutcome, on: readonly RetryClass[] = DEFAULT_RETRY_ON): boolean {
  return inRetryClasses(on, o);
}

/**
 * A Retry-After header's wait (RFC 9110 10.2.3: delay-seconds or an HTTP-date), from `nowMs`;
 * null when absent or unreadable. A date in the past is no wait.
 */
export function retryAfterNs(header: string | undefined, nowMs: number): bigint | null {
  if (header === undefined) return null;
  const text = header.trim();
  if (/^[0-9]{1,10}$/.test(text)) return BigInt(text) * 1_000_000_000n;
  if (!/^[A-Za-z]{3}, [0-9]{2} [A-Za-z]{3} [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT$/.test(text)) return null;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return null;
  return at <= nowMs ? 0n : BigInt(at - nowMs) * 1_000_000n;
}

/** An integer given as a JSON number or as decimal text (a TCP option's value); null otherwise. */
export function readInteger(v: unknown): number | null {
  const n = typeof v === 'string' && /^[0-9]{1,10}$/.test(v) ? Number(v) : v;
  return typeof n === 'number' && Number.isInteger(n) ? n : null;
}

/**
 * A finite number given as a JSON number or as text written as JavaScript writes numbers (any
 * precision, an exponent: `1.0000001`, `1e-7`), so that what LISTRULES writes of a factor or a
 * jitter that came as JSON reads back; null otherwise.
 */
function number(v: unknown): number | null {
  const n = typeof v === 'string' && v.length <= 32 && /^[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?$/.test(v) ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) ? n : null;
}

function duration(v: unknown): bigint | string {
  const ns = typeof v === 'string' && v.length <= 64 ? parseDurationNs(v) : null;
  return ns ?? `not ${DURATION_FORM}`;
}
