// What every schedule command shares: the refusal where schedules are not kept, and the
// answer a schedule is given in (its state and its next nominal time).
import type { Reply } from '../../domain/command.ts';
import type { ScheduleState } from '../../domain/schedule.ts';
import { fail } from '../../errors.ts';
import type { Scheduling } from '../scheduling.ts';

/** Cluster mode keeps no schedules yet: its stream has no subjects for them (tickd-protocol(7) SCHEDULES). */
export const NO_SCHEDULES: Reply = fail('invalid_args', 'schedules are not available in cluster mode yet');

export function scheduleReply(scheduling: Scheduling, state: ScheduleState, job?: string): Reply {
  const schedule = { state, next: scheduling.next(state) };
  return job === undefined ? { ok: true, kind: 'schedule', schedule } : { ok: true, kind: 'schedule', schedule, job };
}
