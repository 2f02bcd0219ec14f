import type { Handler } from './context.ts';

/** One page per command (lib/domain/page.ts): the primary never builds a whole large listing. */
export const ruleList: Handler<'rule.list'> = (ctx, cmd) => {
  const page = ctx.rules.page(cmd.prefix, cmd.scope, cmd.cursor, cmd.limit);
  return { ok: true, kind: 'rules', rules: page.items, next: page.next };
};
