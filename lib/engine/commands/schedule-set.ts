// SCHEDULE SET / PUT /schedules/{id}: create, or replace keeping how far it is decided
// (lib/engine/scheduling.ts). The only way a schedule comes to be: where schedule records may
// not be written yet (a cluster with a node behind format 3) it is refused, and so nothing of a
// schedule is ever written there. A daemon holds at most MAX_SCHEDULES: a client cannot make
// it hold more (each costs the primary memory and deciding), and one more is refused, not taken.
import { wallNowNs } from '../../clock.ts';
import { SCHEDULES_FORMAT } from '../../domain/format.ts';
import { invalidArgs } from '../../errors.ts';
import type { Handler } from './context.ts';
import { scheduleReply } from './schedule-context.ts';
import { shareValues } from '../../schedule/shared.ts';

/** Schedules a daemon holds at most (about 700 bytes of the primary's memory each). */
export const MAX_SCHEDULES = 1 << 22;

export const scheduleSet: Handler<'schedule.set'> = (ctx, cmd) => {
  const refused = ctx.formatRefused(SCHEDULES_FORMAT);
  if (refused !== null) return invalidArgs(`schedules: ${refused}`);
  const { schedules } = ctx.scheduling;
  if (schedules.size >= MAX_SCHEDULES && schedules.get(cmd.schedule.id) === undefined) {
    return invalidArgs(`schedules: this daemon holds ${schedules.size}, the most it takes (${MAX_SCHEDULES}); remove one first`);
  }
  return scheduleReply(ctx.scheduling, ctx.scheduling.set(shareValues(cmd.schedule), wallNowNs()));
};
