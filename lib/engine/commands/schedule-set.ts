// SCHEDULE SET / PUT /schedules/{id}: create, or replace keeping how far it is decided
// (lib/engine/scheduling.ts). The only way a schedule comes to be: where schedule records may
// not be written yet (a cluster with a node behind format 3) it is refused, and so nothing of a
// schedule is ever written there.
import { wallNowNs } from '../../clock.ts';
import { invalidArgs } from '../../errors.ts';
import type { Handler } from './context.ts';
import { scheduleReply } from './schedule-context.ts';

export const scheduleSet: Handler<'schedule.set'> = (ctx, cmd) => {
  const refused = ctx.schedulesRefused();
  if (refused !== null) return invalidArgs(`schedules: ${refused}`);
  return scheduleReply(ctx.scheduling, ctx.scheduling.set(cmd.schedule, wallNowNs()));
};
