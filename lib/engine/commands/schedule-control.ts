// SCHEDULE REMOVE, PAUSE / RESUME and RUN: what changes a schedule besides SET.
import { notFound } from '../../errors.ts';
import { wallNowNs } from '../../clock.ts';
import { DONE, type Handler } from './context.ts';
import { scheduleReply } from './schedule-context.ts';

export const scheduleRemove: Handler<'schedule.remove'> = (ctx, cmd) => {
  return ctx.scheduling.remove(cmd.id) ? DONE : notFound('schedule', cmd.id);
};

/** Resuming does not burst: what fell in the pause follows the missed-run policy. */
export const schedulePause: Handler<'schedule.pause'> = (ctx, cmd) => {
  const state = ctx.scheduling.pause(cmd.id, cmd.paused, wallNowNs());
  return state === undefined ? notFound('schedule', cmd.id) : scheduleReply(ctx.scheduling, state);
};

export const scheduleRun: Handler<'schedule.run'> = (ctx, cmd) => {
  const ran = ctx.scheduling.run(cmd.id, wallNowNs());
  return ran === undefined ? notFound('schedule', cmd.id) : scheduleReply(ctx.scheduling, ran.state, ran.job);
};
