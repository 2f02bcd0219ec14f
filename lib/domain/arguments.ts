// How runner arguments are written as protocol tokens: the runner of a rule as the tokens of
// its LISTRULES / RULE SET form, and a value as one argument, bare when safe, else in double
// quotes with `\"` and `\\` (tickd-protocol(7) GRAMMAR). Shared by the protocol formatter and
// `tickd dump`, so a listed or dumped rule pastes back as a RULE SET command. Also the one
// reader of the awf argument list (`<workflow> [--input key=value]...`), which TCP `RULE SET`
// and the HTTP string form share; each caller words its own messages from the failure returned.
import type { Rule } from './rule.ts';
import { optionTokens } from './rule-options.ts';
import type { RunnerSpec } from './runner-spec.ts';

const NEEDS_QUOTES = /[\x00-\x20"\\\x7f]/;
const ESCAPES = /["\\\r\n]/g;

/** A value as one protocol argument: bare when safe, else quoted with escapes. */
export function quoteArg(s: string): string {
  if (s !== '' && !NEEDS_QUOTES.test(s)) return s;
  return `"${s.replace(ESCAPES, (c) => (c === '\r' ? '\\r' : c === '\n' ? '\\n' : `\\${c}`))}"`;
}

/** `<runner_type> <runner_args...>` as tokens (tickd-protocol(7) RUNNERS). */
export function runnerTokens(r: RunnerSpec): string[] {
  switch (r.type) {
    case 'shell':
      return ['shell', r.command];
    case 'direct':
      return ['direct', r.executable, ...r.args];
    case 'http':
      return ['http', r.method, r.url];
    case 'awf': {
      const out = ['awf', r.workflow];
      for (const input of r.inputs) out.push('--input', input);
      return out;
    }
    case 'amqp':
      return ['amqp', r.dsn, r.exchange, r.routing_key];
    case 'redis':
      return ['redis', r.url, r.command, r.key];
    default: {
      const never: never = r;
      return never;
    }
  }
}

export type AwfRunner = Extract<RunnerSpec, { type: 'awf' }>;

/**
 * Why an awf argument list does not read: no workflow; a token at index `at` that should be
 * `--input`; or a `--input` last, with its key=value missing at index `at`.
 */
export type AwfArgsError =
  | { readonly error: 'no_workflow' }
  | { readonly error: 'not_input' | 'no_value'; readonly at: number };

/** `<workflow> [--input key=value]...` -> the awf runner (shape only: validateRunner checks the values). */
export function parseAwfArgs(a: readonly string[]): AwfRunner | AwfArgsError {
  if (a.length === 0) return { error: 'no_workflow' };
  const inputs: string[] = [];
  for (let i = 1; i < a.length; i += 2) {
    if (a[i] !== '--input') return { error: 'not_input', at: i };
    if (i + 1 >= a.length) return { error: 'no_value', at: i + 1 };
    inputs.push(a[i + 1]!);
  }
  return { type: 'awf', workflow: a[0]!, inputs };
}

/**
 * `<rule_id> <pattern> [option=value ...] <runner_type> <runner_args...>`: the arguments of a
 * `RULE SET` for this rule (LISTRULES, `tickd ctl rule set`, `tickd dump`). Options are written
 * only for a rule that has some, so a rule without any reads exactly as before they existed.
 */
export function formatRuleArgs(rule: Rule): string {
  const parts = [quoteArg(rule.id), quoteArg(rule.pattern)];
  for (const t of optionTokens(rule.options)) parts.push(quoteArg(t));
  for (const t of runnerTokens(rule.runner)) parts.push(quoteArg(t));
  return parts.join(' ');
}
