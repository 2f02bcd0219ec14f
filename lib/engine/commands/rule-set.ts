// RULE SET: create or replace by identifier. Pending jobs are not re-evaluated: matching
// happens when a job fires. A rule with options (retries, limits) is a record of format 4:
// where such records may not be written yet (a cluster with a node behind format 4) it is
// refused, and so no job ever gets a retry state there either.
import { RETRIES_FORMAT } from '../../domain/format.ts';
import { invalidArgs } from '../../errors.ts';
import { DONE, type Handler } from './context.ts';

export const ruleSet: Handler<'rule.set'> = (ctx, cmd) => {
  if (cmd.rule.options !== undefined) {
    const refused = ctx.formatRefused(RETRIES_FORMAT);
    if (refused !== null) return invalidArgs(`rule options: ${refused}`);
  }
  ctx.changes.putRule(cmd.rule);
  return DONE;
};
