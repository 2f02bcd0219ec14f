import { notFound } from '../../errors.ts';
import type { Handler } from './context.ts';

export const ruleGet: Handler<'rule.get'> = (ctx, cmd) => {
  const rule = ctx.rules.get(cmd.id);
  return rule === undefined ? notFound('rule', cmd.id) : { ok: true, kind: 'rule', rule };
};
