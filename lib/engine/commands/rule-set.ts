// RULE SET: create or replace by identifier. Pending jobs are not re-evaluated: matching
// happens when a job fires. A rule with options (retries, limits) is a record of format 4, of
// format 5 when its retry policy has `on`, and of format 6 when it requires node tags (`on`;
// lib/domain/rule-options.ts optionsFormat): where such records may not be written yet (a
// cluster with a node behind that format) it is refused, and so no job ever gets a retry state
// there either, nor a placement a node behind could not honour.
import { optionsFormat, optionsFormatField } from '../../domain/rule-options.ts';
import { invalidArgs } from '../../errors.ts';
import { DONE, type Handler } from './context.ts';

export const ruleSet: Handler<'rule.set'> = (ctx, cmd) => {
  if (cmd.rule.options !== undefined) {
    const refused = ctx.formatRefused(optionsFormat(cmd.rule.options));
    // Named after what needs the format: `on` or `retry.on` where it is the reason, else the options at all.
    if (refused !== null) return invalidArgs(`${optionsFormatField(cmd.rule.options)}: ${refused}`);
  }
  ctx.changes.putRule(cmd.rule);
  return DONE;
};
