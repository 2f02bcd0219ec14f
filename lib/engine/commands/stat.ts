import type { Handler } from './context.ts';

export const stat: Handler<'stat'> = (ctx) => ({ ok: true, kind: 'stat', stat: ctx.stat() });
