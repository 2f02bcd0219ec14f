// Firing due jobs and applying execution results (interface.md, States and transitions;
// decisions §4). Every attempt gets a 128-bit id; a result only changes the job when the job
// still carries that attempt, so results of attempts orphaned by SET or REMOVE are ignored.
import type { Job } from '../domain/job.ts';
import type { Rule } from '../domain/rule.ts';
import { newAttemptId } from '../runner/execution.ts';
import type { Changes } from './changes.ts';

export type Dispatch = (job: Job, rule: Rule, attempt: string) => void;

export interface FiringObserver {
  /** `nowNs` is the tick's wall time: `nowNs - job.execution` is how late the job fired. */
  fired(job: Job, outcome: 'triggered' | 'no-rule', nowNs: bigint): void;
  finished(jobId: string, success: boolean): void;
}

/** Jobs taken from the due index per tick at most, so a huge backlog cannot stall the loop. */
const MAX_FIRE_PER_TICK = 20_000;

export class Firing {
  private readonly changes: Changes;
  private readonly dispatch: Dispatch;
  private readonly observer: FiringObserver | undefined;
  private results: Array<{ jobId: string; attempt: string; success: boolean }> = [];

  constructor(changes: Changes, dispatch: Dispatch, observer?: FiringObserver) {
    this.changes = changes;
    this.dispatch = dispatch;
    this.observer = observer;
  }

  queueResult(jobId: string, attempt: string, success: boolean): void {
    this.results.push({ jobId, attempt, success });
  }

  applyResults(): void {
    if (this.results.length === 0) return;
    const results = this.results;
    this.results = [];
    for (const r of results) {
      if (this.changes.attempts.get(r.jobId) !== r.attempt) continue; // stale attempt
      this.changes.setStatus(r.jobId, r.success ? 'executed' : 'failed');
      this.observer?.finished(r.jobId, r.success);
    }
  }

  fireDue(nowNs: bigint): void {
    const next = this.changes.jobs.nextDue();
    if (next === undefined || next > nowNs) return; // the idle tick: one comparison
    for (const job of this.changes.jobs.takeDue(nowNs, MAX_FIRE_PER_TICK)) {
      const rule = this.changes.rules.match(job.id);
      if (rule === undefined) {
        this.changes.setStatus(job.id, 'failed');
        this.observer?.fired(job, 'no-rule', nowNs);
        continue;
      }
      const attempt = newAttemptId();
      this.changes.setStatus(job.id, 'triggered', attempt);
      this.observer?.fired(job, 'triggered', nowNs);
      this.dispatch(job, rule, attempt);
    }
  }

  /**
   * Dispatches again every `triggered` job no attempt of this process owns: one left so on
   * disk by an earlier process (at-least-once). A job this process fired carries its attempt
   * from fireDue on, so it is never dispatched twice, whenever this runs.
   */
  redispatchTriggered(): number {
    let n = 0;
    for (const job of this.changes.jobs.withStatus('triggered')) {
      if (this.changes.attempts.has(job.id)) continue;
      const rule = this.changes.rules.match(job.id);
      if (rule === undefined) {
        this.changes.setStatus(job.id, 'failed');
        continue;
      }
      const attempt = newAttemptId();
      this.changes.attempts.set(job.id, attempt);
      this.dispatch(job, rule, attempt);
      n++;
    }
    return n;
  }
}
