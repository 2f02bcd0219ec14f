// `rule set`, `rule ls`, `rule rm` (tickd-ctl(1) COMMANDS): RULE SET, LISTRULES, REMOVERULE.
// `rule set` takes the rule options (`retry.attempts=5`, tickd-protocol(7) RETRIES AND LIMITS),
// the runner and its arguments as separate shell words, as RULE SET does, and quotes them itself
// (lib/domain/arguments.ts), after the same checks the daemon makes (parseRuleArgs of
// lib/protocol/parse.ts): a bad rule is a usage error here.
import { formatRuleArgs } from '../domain/arguments.ts';
import { parseRuleArgs } from '../protocol/parse.ts';
import { MAX_LINE_BYTES } from '../protocol/framer.ts';
import { expectOk, type Prepare } from './context.ts';
import { UsageError } from './errors.ts';
import { checkPrefix, removals } from './job-commands.ts';
import { JsonArrayWriter, RULE_HEADER, TableWriter, ruleCells, ruleJson } from './output.ts';
import { readRuleLine as parseRuleLine } from '../client/rules.ts';
import { listing, single } from './requests.ts';

/** The longest request id ctl uses on a line with a RULE SET (`c` and a counter). */
const RID_ROOM = 12;

export const ruleSet: Prepare = (args) => {
  const rule = parseRuleArgs(args);
  if (typeof rule === 'string') throw new UsageError(rule);
  const line = `RULE SET ${formatRuleArgs(rule)}`;
  const bytes = Buffer.byteLength(line) + RID_ROOM;
  if (bytes > MAX_LINE_BYTES) throw new UsageError(`the rule makes a protocol line of ${bytes} bytes; the daemon takes at most ${MAX_LINE_BYTES}`);
  return async (ctx) => {
    const client = await ctx.client();
    expectOk(await single(client, line));
    if (ctx.format === 'json') ctx.out.write(`${ruleJson(rule)}\n`);
    else if (ctx.format === 'raw') ctx.out.write('OK\n');
    else {
      const t = new TableWriter(RULE_HEADER);
      ctx.out.write(t.add(ruleCells(rule)) + t.end());
    }
    return 0;
  };
};

export const ruleLs: Prepare = (args) => {
  const prefix = checkPrefix(args[0]);
  return async (ctx) => {
    const client = await ctx.client();
    const table = new TableWriter(RULE_HEADER);
    const json = new JsonArrayWriter();
    const answer = await listing(client, 'LISTRULES', parseRuleLine, (rule, rest) => {
      if (!rule.id.startsWith(prefix)) return;
      if (ctx.format === 'json') ctx.out.write(json.add(ruleJson(rule)));
      else if (ctx.format === 'raw') ctx.out.write(`${rest}\n`);
      else ctx.out.write(table.add(ruleCells(rule)));
    });
    expectOk(answer);
    ctx.out.write(ctx.format === 'json' ? json.end() : ctx.format === 'raw' ? 'OK\n' : table.end());
    return 0;
  };
};

export const ruleRm: Prepare = removals('rule', 'REMOVERULE');
