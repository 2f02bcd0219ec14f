// SCHEDULE SET / PUT /schedules/{id}: create, or replace keeping how far it is decided (lib/engine/scheduling.ts).
import { wallNowNs } from '../../clock.ts';
import type { Handler } from './context.ts';
import { NO_SCHEDULES, scheduleReply } from './schedule-context.ts';

export const scheduleSet: Handler<'schedule.set'> = (ctx, cmd) => {
  if (ctx.scheduling === null) return NO_SCHEDULES;
  return scheduleReply(ctx.scheduling, ctx.scheduling.set(cmd.schedule, wallNowNs()));
};
