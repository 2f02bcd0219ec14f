// RULE SET: create or replace by identifier. Pending jobs are not re-evaluated: matching
// happens when a job fires.
import { DONE, type Handler } from './context.ts';

export const ruleSet: Handler<'rule.set'> = (ctx, cmd) => {
  ctx.changes.putRule(cmd.rule);
  return DONE;
};
