// REMOVERULE: pending jobs the rule matched are not cancelled (tickd-protocol(7) COMMANDS).
import { notFound } from '../../errors.ts';
import { DONE, type Handler } from './context.ts';

export const ruleRemove: Handler<'rule.remove'> = (ctx, cmd) => {
  if (ctx.rules.get(cmd.id) === undefined) return notFound('rule', cmd.id);
  ctx.changes.deleteRule(cmd.id);
  return DONE;
};
