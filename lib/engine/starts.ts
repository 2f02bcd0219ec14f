// Starting an attempt (issue 38): a due job, a retry come due, or a job left `triggered` at a
// start is offered to its rule; the rule's limits (rule-limits.ts) start it now or make it
// wait. Starting marks the job `triggered` under a new attempt id (firing.ts), with the
// attempt's number when a retry policy made it more than the first, and hands it to the
// runner pool with what its lateness is measured against: when it was due, and how long a
// limit held it (so "late because of my limit" never reads as "tickd is slow").
import type { Job } from '../domain/job.ts';
import type { Rule } from '../domain/rule.ts';
import type { Changes, ReadonlyJobs } from './changes.ts';
import type { RuleLimits, WaitKind, Waiting } from './rule-limits.ts';
import type { RuleStore } from '../store/rules.ts';

/** What the runner pool is told of an attempt besides its job and rule. */
export interface RunInfo {
  /** 1 for the first run. */
  readonly attemptNo: number;
  /** When this attempt was due: the job's time, or its retry's. */
  readonly dueNs: bigint;
  /** How long it waited for its rule's concurrency or rate limit, ns. */
  readonly heldNs: bigint;
}

export type Dispatch = (job: Job, rule: Rule, attempt: string, run: RunInfo) => void;

export interface StartParts {
  readonly changes: Changes;
  readonly jobs: ReadonlyJobs;
  readonly rules: RuleStore;
  readonly limits: RuleLimits;
  readonly dispatch: Dispatch;
  readonly newAttemptId: () => string;
  /** The monotonic clock, ns (rate windows). */
  readonly mono: () => bigint;
  /** A due job was started (`kind` due only: the firing's own count). */
  readonly fired: (job: Job, nowNs: bigint) => void;
  /** A waiting job no rule matches any more: it fails as a due job without a rule does. */
  readonly noRule: (job: Job, nowNs: bigint) => void;
}

export class Starts {
  private readonly p: StartParts;

  constructor(parts: StartParts) {
    this.p = parts;
  }

  /** Starts the attempt now if `rule`'s limits admit it, else it waits its turn. */
  offer(job: Job, rule: Rule, kind: WaitKind, attemptNo: number, dueNs: bigint, nowNs: bigint, since = nowNs): void {
    const mono = this.p.mono();
    if (this.p.limits.admits(rule, mono)) this.start(job, rule, kind, attemptNo, dueNs, nowNs - since, nowNs, mono);
    else this.p.limits.hold(rule, { job, kind, attemptNo, dueNs, since });
  }

  /** Starts what waited and is now admitted; after a rule change, offers each again to the rule that matches. */
  release(nowNs: bigint): void {
    const { limits, rules } = this.p;
    if (limits.size === 0) return;
    const mono = this.p.mono();
    limits.release(mono, (id) => rules.get(id), (w, rule) => {
      const job = this.stillWaiting(w);
      if (job === undefined) return;
      const now = rule ?? rules.match(job.id);
      if (now === undefined) this.p.noRule(job, nowNs);
      else if (rule === undefined) this.offer(job, now, w.kind, w.attemptNo, w.dueNs, nowNs, w.since);
      else this.start(job, now, w.kind, w.attemptNo, w.dueNs, nowNs - w.since, nowNs, mono);
    });
  }

  private start(job: Job, rule: Rule, kind: WaitKind, attemptNo: number, dueNs: bigint, heldNs: bigint, nowNs: bigint, mono: bigint): void {
    const { changes } = this.p;
    const attempt = this.p.newAttemptId();
    if (kind === 'again') changes.retry(job.id, attempt); // `triggered` on disk already, under this number
    else if (attemptNo === 1 && job.attempt === undefined) changes.setStatus(job.id, 'triggered', attempt);
    else changes.putJob({ id: job.id, execution: job.execution, status: 'triggered', attempt: attemptNo }, attempt);
    this.p.limits.started(rule, attempt, mono);
    // Handed over before it is observed: the execution's start is what waits, the count not.
    this.p.dispatch(job, rule, attempt, { attemptNo, dueNs, heldNs });
    if (kind === 'due') this.p.fired(job, nowNs);
  }

  /** The job as it is now, if it is still what waited (not SET, REMOVEd or run meanwhile). */
  private stillWaiting(w: Waiting): Job | undefined {
    const job = this.p.jobs.get(w.job.id);
    if (job === undefined || this.p.changes.attemptOf(job.id) !== undefined) return undefined;
    switch (w.kind) {
      case 'due': return job.status === 'planned' && job.execution === w.job.execution ? job : undefined;
      case 'retry': return job.status === 'triggered' && job.retryAt === w.dueNs ? job : undefined;
      case 'again': return job.status === 'triggered' && job.retryAt === undefined ? job : undefined;
      default: {
        const never: never = w.kind;
        return never;
      }
    }
  }
}
