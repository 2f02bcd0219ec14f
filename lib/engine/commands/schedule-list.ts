import type { Handler } from './context.ts';

/** One page per command (lib/domain/page.ts), like the job and rule listings. */
export const scheduleList: Handler<'schedule.list'> = (ctx, cmd) => {
  const scheduling = ctx.scheduling;
  const page = scheduling.schedules.page(cmd.prefix, cmd.scope, cmd.cursor, cmd.limit);
  return { ok: true, kind: 'schedules', schedules: page.items.map((state) => ({ state, next: scheduling.next(state) })), next: page.next };
};
