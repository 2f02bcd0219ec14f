// What every schedule command shares: the answer a schedule is given in (its state and its
// next nominal time).
import type { Reply } from '../../domain/command.ts';
import type { ScheduleState } from '../../domain/schedule.ts';
import type { Scheduling } from '../scheduling.ts';

export function scheduleReply(scheduling: Scheduling, state: ScheduleState, job?: string): Reply {
  const schedule = { state, next: scheduling.next(state) };
  return job === undefined ? { ok: true, kind: 'schedule', schedule } : { ok: true, kind: 'schedule', schedule, job };
}
