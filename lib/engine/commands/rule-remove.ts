// REMOVERULE: pending jobs the rule matched are not cancelled (interface.md, What the service does §6).
import { notFound } from '../../errors.ts';
import { DONE, type Handler } from './context.ts';

export const ruleRemove: Handler<'rule.remove'> = (ctx, cmd) => {
  if (ctx.rules.get(cmd.id) === undefined) return notFound('rule', cmd.id);
  ctx.changes.deleteRule(cmd.id);
  return DONE;
};
