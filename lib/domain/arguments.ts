// How runner arguments are written as protocol tokens: the runner of a rule as the tokens of
// its LISTRULES / RULE SET form, and a value as one argument, bare when safe, else in double
// quotes with `\"` and `\\` (decisions §6). Shared by the protocol formatter and `tickd dump`,
// so a listed or dumped rule pastes back as a RULE SET command.
import type { Rule } from './rule.ts';
import type { RunnerSpec } from './runner-spec.ts';

const NEEDS_QUOTES = /[\x00-\x20"\\\x7f]/;
const ESCAPES = /["\\\r\n]/g;

/** A value as one protocol argument: bare when safe, else quoted with escapes. */
export function quoteArg(s: string): string {
  if (s !== '' && !NEEDS_QUOTES.test(s)) return s;
  return `"${s.replace(ESCAPES, (c) => (c === '\r' ? '\\r' : c === '\n' ? '\\n' : `\\${c}`))}"`;
}

/** `<runner_type> <runner_args...>` as tokens (interface.md, Runner arguments in LISTRULES lines). */
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

/** `<rule_id> <pattern> <runner_type> <runner_args...>`: the arguments of a `RULE SET` for this rule. */
export function formatRuleArgs(rule: Rule): string {
  const parts = [quoteArg(rule.id), quoteArg(rule.pattern)];
  for (const t of runnerTokens(rule.runner)) parts.push(quoteArg(t));
  return parts.join(' ');
}
