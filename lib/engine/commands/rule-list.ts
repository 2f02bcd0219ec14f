import type { Handler } from './context.ts';

export const ruleList: Handler<'rule.list'> = (ctx, cmd) => ({ ok: true, kind: 'rules', rules: ctx.changes.rules.list(cmd.prefix, cmd.scope) });
