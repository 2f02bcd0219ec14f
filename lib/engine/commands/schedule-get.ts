// SCHEDULE GET, NEXT and HISTORY: reads of one schedule.
import { notFound } from '../../errors.ts';
import { wallNowNs } from '../../clock.ts';
import { Calendar } from '../../schedule/calendar.ts';
import type { Handler } from './context.ts';
import { scheduleReply } from './schedule-context.ts';
import { history } from './schedule-history.ts';

/** Nominal times a preview, and entries a history, show at most. */
export const MAX_SCHEDULE_LIST = 100;

export const scheduleGet: Handler<'schedule.get'> = (ctx, cmd) => {
  const state = ctx.scheduling.schedules.get(cmd.id);
  return state === undefined ? notFound('schedule', cmd.id) : scheduleReply(ctx.scheduling, state);
};

/** The calendar's next nominal times after now, paused or not: what the schedule would do. */
export const scheduleNext: Handler<'schedule.next'> = (ctx, cmd) => {
  const state = ctx.scheduling.schedules.get(cmd.id);
  if (state === undefined) return notFound('schedule', cmd.id);
  const n = Math.min(MAX_SCHEDULE_LIST, Math.max(1, Math.trunc(cmd.n) || 1));
  return { ok: true, kind: 'instants', instants: new Calendar(state.schedule).next(wallNowNs(), n) };
};

export const scheduleOccurrences: Handler<'schedule.occurrences'> = (ctx, cmd) => {
  const state = ctx.scheduling.schedules.get(cmd.id);
  if (state === undefined) return notFound('schedule', cmd.id);
  const limit = Math.min(MAX_SCHEDULE_LIST, Math.max(1, Math.trunc(cmd.limit) || 1));
  return { ok: true, kind: 'occurrences', occurrences: history(state, ctx.jobs, limit) };
};
