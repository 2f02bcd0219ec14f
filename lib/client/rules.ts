// Rules as the client writes them (RULE SET) and reads them (LISTRULES):
// tickd-protocol(7) RUNNERS and tickd-protocol(7) RETRIES AND LIMITS. The runner is the HTTP object form ({type: 'shell', command}
// ...); the options are `retry`, `concurrency`, `rate` and `on`, as the HTTP rule object has them.
// Writing only shapes the tokens: the daemon checks every value and answers invalid_args
// naming the field, so the client never refuses what a newer daemon would take. Reading uses
// the daemon's own grammar (lib/domain/runner-args.ts), so a listed rule reads back into the
// values it holds.
import { quoteArg, runnerTokens } from '../domain/arguments.ts';
import { formatDuration } from '../domain/duration.ts';
import type { RateLimit } from '../domain/rule-options.ts';
import type { Rule as HeldRule } from '../domain/rule.ts';
import { parseRunnerArgs, splitRuleOptions } from '../domain/runner-args.ts';
import type { RetryPolicy as HeldPolicy } from '../domain/retry-policy.ts';
import { retryClassText } from '../domain/retry-on.ts';
import type { RunnerSpec } from '../domain/runner-spec.ts';
import { tokenize } from '../protocol/tokenize.ts';

export type { RunnerSpec, RateLimit };

/** A retry policy as the daemon holds it; `on` as written (`5xx`, `exit:75`, `404`), when set. */
export type RetryPolicy = Omit<HeldPolicy, 'on'> & { readonly on?: readonly string[] };

/** A duration: nanoseconds, or text such as `30s`, `1h30m`, `250ms`. */
export type Duration = bigint | string;

export interface RetryInput {
  /** Every run counts, the first included: 1 to 1000. */
  readonly attempts: number;
  readonly backoff?: 'fixed' | 'exponential';
  readonly delay?: Duration;
  readonly factor?: number;
  readonly maxDelay?: Duration;
  readonly jitter?: number;
  /** The failures retried (`5xx`, `429`, `exit`, `exit:75`, `network`, ...); absent: the daemon's default. */
  readonly on?: readonly string[];
}

export interface RuleInput {
  readonly id: string;
  /** Jobs whose identifier starts with it ('' matches every job). */
  readonly pattern: string;
  readonly runner: RunnerSpec;
  readonly retry?: RetryInput;
  readonly concurrency?: number;
  readonly rate?: { readonly limit: number; readonly per: Duration };
  /** Cluster mode: the node tags a job needs, every one (`db`, `eu`); absent: any node. */
  readonly on?: readonly string[];
}

/** A rule as the daemon holds it: durations in nanoseconds, every retry field filled in. */
export interface Rule {
  readonly id: string;
  readonly pattern: string;
  readonly runner: RunnerSpec;
  readonly retry?: RetryPolicy;
  readonly concurrency?: number;
  readonly rate?: RateLimit;
  readonly on?: readonly string[];
}

function duration(d: Duration): string {
  return typeof d === 'bigint' ? formatDuration(d) : d;
}

/** RULE SET's arguments for `rule`, quoted. */
export function ruleSetArgs(rule: RuleInput): string {
  const options: string[] = [];
  const r = rule.retry;
  if (r !== undefined) {
    options.push(`retry.attempts=${r.attempts}`);
    if (r.backoff !== undefined) options.push(`retry.backoff=${r.backoff}`);
    if (r.delay !== undefined) options.push(`retry.delay=${duration(r.delay)}`);
    if (r.factor !== undefined) options.push(`retry.factor=${r.factor}`);
    if (r.maxDelay !== undefined) options.push(`retry.max_delay=${duration(r.maxDelay)}`);
    if (r.jitter !== undefined) options.push(`retry.jitter=${r.jitter}`);
    if (r.on !== undefined) options.push(`retry.on=${r.on.join(',')}`);
  }
  if (rule.concurrency !== undefined) options.push(`concurrency=${rule.concurrency}`);
  if (rule.rate !== undefined) options.push(`rate.limit=${rule.rate.limit}`, `rate.per=${duration(rule.rate.per)}`);
  if (rule.on !== undefined) options.push(`on=${rule.on.join(',')}`);
  return [rule.id, rule.pattern, ...options, ...runnerTokens(rule.runner)].map(quoteArg).join(' ');
}


/**
 * A LISTRULES line `<rule> <pattern> [option=value...] <kind> <runner_args...>` read with the
 * daemon's own grammar (lib/domain/runner-args.ts), as the daemon holds the rule; null for a
 * line that is not one. ctl lists rules with it.
 */
export function readRuleLine(rest: string): HeldRule | null {
  const t = tokenize(rest);
  if (t === null || t.length < 3) return null;
  const split = splitRuleOptions(t.slice(2));
  if (typeof split === 'string' || split.rest.length === 0) return null;
  const runner = parseRunnerArgs(split.rest[0]!, split.rest.slice(1));
  if (typeof runner === 'string') return null;
  return split.options === undefined ? { id: t[0]!, pattern: t[1]!, runner } : { id: t[0]!, pattern: t[1]!, runner, options: split.options };
}

/** A LISTRULES line as the client gives rules back (options beside the runner, `on` as written). */
export function parseRuleLine(rest: string): Rule | null {
  const held = readRuleLine(rest);
  if (held === null) return null;
  const { retry, ...limits } = held.options ?? {};
  return { id: held.id, pattern: held.pattern, runner: held.runner, ...(retry === undefined ? {} : { retry: writtenPolicy(retry) }), ...limits };
}

function writtenPolicy({ on, ...rest }: HeldPolicy): RetryPolicy {
  return on === undefined ? rest : { ...rest, on: on.map(retryClassText) };
}
