// A schedule's recent occurrences, newest first: its occurrence jobs (with their status now),
// a held one, manual runs and the skips it keeps (lib/domain/schedule.ts SKIPS_KEPT).
import type { OccurrenceView, ScheduleState } from '../../domain/schedule.ts';
import { manualId, occurrenceId } from '../../schedule/occurrence.ts';
import type { ReadonlyJobs } from '../changes.ts';

export function history(state: ScheduleState, jobs: ReadonlyJobs, limit: number): OccurrenceView[] {
  const id = state.schedule.id;
  const out: OccurrenceView[] = [];
  const jobEntry = (job: string, nominal: bigint, manual: boolean): OccurrenceView => {
    const outcome = jobs.statusOf(job) ?? 'removed';
    return manual ? { nominal, job, outcome, manual } : { nominal, job, outcome };
  };
  for (const nominal of state.fires) out.push(jobEntry(occurrenceId(id, nominal), nominal, false));
  for (const at of state.manual) out.push(jobEntry(manualId(id, at), at, true));
  if (state.held !== null) out.push({ nominal: state.held, job: occurrenceId(id, state.held), outcome: 'held' });
  for (const s of state.skips) out.push({ nominal: s.to, job: null, outcome: 'skipped', reason: s.reason, from: s.from, count: s.count });
  out.sort((a, b) => (a.nominal < b.nominal ? 1 : a.nominal > b.nominal ? -1 : 0));
  return out.slice(0, limit);
}
