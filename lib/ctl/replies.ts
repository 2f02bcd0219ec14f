// Reading the daemon's answers (tickd-protocol(7) RESPONSES, COMMANDS): each function takes one
// reply line with its request id removed. Pure. Rule lines are read with the daemon's own
// tokenizer and runner-form parser, so what LISTRULES writes is read back by the same grammar.
import type { Rule } from '../domain/rule.ts';
import { tokenize } from '../protocol/tokenize.ts';
import { parseRunnerArgs, splitRuleOptions } from '../protocol/parse.ts';

export { parseAnswer, parseAttemptLine, parseJobBody, parseJobLine, parseStatLine, type Answer, type Attempt as AttemptLine } from '../client/replies.ts';

/** A LISTRULES line `<rule> <pattern> [option=value...] <kind> <runner_args...>`, quoted as the daemon writes it. */
export function parseRuleLine(rest: string): Rule | null {
  const t = tokenize(rest);
  if (t === null || t.length < 3) return null;
  const split = splitRuleOptions(t.slice(2));
  if (typeof split === 'string' || split.rest.length === 0) return null;
  const runner = parseRunnerArgs(split.rest[0]!, split.rest.slice(1));
  if (typeof runner === 'string') return null;
  return split.options === undefined ? { id: t[0]!, pattern: t[1]!, runner } : { id: t[0]!, pattern: t[1]!, runner, options: split.options };
}
