// SCHEDULE REMOVE, PAUSE / RESUME and RUN: what changes a schedule besides SET.
import { invalidArgs, notFound } from '../../errors.ts';
import { MAX_MANUAL_WAITING } from '../scheduling.ts';
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
  if (ran === undefined) return notFound('schedule', cmd.id);
  if (ran === 'busy') return invalidArgs(`run: ${MAX_MANUAL_WAITING} manual runs of schedule ${cmd.id} have not ended yet; the most it holds`);
  return scheduleReply(ctx.scheduling, ran.state, ran.job);
};
