// Where a due job's runner is chosen, and what comes of it (the job's States and transitions
// in tickd-protocol(7); tickd(8) for restarts). Each tick: the due jobs, earliest first, get
// the runner of the rule with the longest matching pattern (RuleStore.match), are marked
// `triggered` under a new 128-bit attempt id and handed to the runner pool as an execution
// request (the pool then picks the implementation by runner kind: lib/runner/run-by-kind.ts);
// a due job no rule matches is `failed`. Results come back through ExecutionResults and move
// the job to `executed` or `failed`, but only while the job still carries that attempt: the
// results of attempts orphaned by SET or REMOVE are ignored. The job's last attempt
// (doc/execution.md "The attempt record") is recorded at the same moments: a result that
// counts, or a due job no rule matched.
//
// Retries and limits (issue 38): a job's start goes through its rule's limits (starts.ts,
// rule-limits.ts), and a failed result through its rule's retry policy (retrying.ts) before
// the job is ended. Each step first applies results (which frees places under a concurrency
// limit), then starts what waited for a limit, then the retries come due, then the due jobs:
// what waited longest goes first.
import type { Attempt } from '../domain/attempt.ts';
import type { Job } from '../domain/job.ts';
import type { Changes, ReadonlyJobs } from './changes.ts';
import type { LastAttempts } from '../store/attempts.ts';
import type { RuleStore } from '../store/rules.ts';
import type { ExecutionResults } from './results.ts';
import { RuleLimits } from './rule-limits.ts';
import { Retrying } from './retrying.ts';
import { inSlice } from './slice.ts';
import { newAttemptId } from './attempt-id.ts';
import { Starts, type Dispatch } from './starts.ts';

export type { Dispatch, RunInfo } from './starts.ts';

export interface FiringObserver {
  /** `nowNs` is the tick's wall time: `nowNs - job.execution` is how late the job fired. */
  fired(job: Job, outcome: 'triggered' | 'no-rule', nowNs: bigint): void;
  /**
   * The job became `executed` or `failed`: a result of its current attempt, or no rule matched
   * it (when due, or at a re-dispatch). `attempt` is its record (absent if a result had none).
   */
  finished(jobId: string, success: boolean, attempt: Attempt | undefined): void;
}

/**
 * Due jobs fired per tick at most, and the time one tick may spend firing them (checked every
 * FIRE_CHUNK jobs). A burst is fired in slices and the ticker runs the next slice on the
 * following event-loop turn (lib/engine/tick.ts): between slices the first executions'
 * requests leave and commands are served, so the first job of a 20 000-job burst starts after
 * one slice, not after the whole burst is marked and queued. The time bound matters for the
 * first burst a daemon meets: before the firing path is compiled a slice of 256 took 12 ms.
 */
export const FIRE_SLICE = 256;
const FIRE_CHUNK = 32;
const FIRE_SLICE_MS = 1;

export interface FiringParts {
  readonly changes: Changes;
  readonly jobs: ReadonlyJobs;
  readonly rules: RuleStore;
  readonly results: ExecutionResults;
  readonly dispatch: Dispatch;
  readonly observer?: FiringObserver | undefined;
  /** Where the last attempt of each job is kept (none: not kept). */
  readonly attempts?: LastAttempts | undefined;
  /** The monotonic clock, ns (rate limits); process.hrtime.bigint when not given. */
  readonly mono?: (() => bigint) | undefined;
  /** A draw in [0, 1) for retry jitter; Math.random when not given. */
  readonly random?: (() => number) | undefined;
}

const NO_RULE = Object.freeze({ kind: 'no_rule' } as const);
/** Results applied per step at most by time (checked every RESULT_CHUNK); the rest on the next. */
const RESULT_SLICE_MS = 1;
const RESULT_CHUNK = 64;

/** The record of a due job no rule matched: it "started" when it fired, and ran for nothing. */
export function noRuleAttempt(job: Job, nowNs: bigint): Attempt {
  return { rule: null, runner: null, startedNs: nowNs, latenessNs: nowNs - job.execution, durationNs: 0n, outcome: NO_RULE };
}

export class Firing {
  private readonly p: FiringParts;
  readonly limits = new RuleLimits();
  private readonly starts: Starts;
  private readonly retrying: Retrying;
  private readonly mono: () => bigint;
  /** The `durable` callbacks of the results applied since the last takeDurables(). */
  private durables: Array<() => void> = [];

  constructor(parts: FiringParts) {
    this.p = parts;
    this.mono = parts.mono ?? (() => process.hrtime.bigint());
    const noRule = (job: Job, nowNs: bigint): void => this.failNoRule(job, nowNs);
    this.starts = new Starts({
      changes: parts.changes, jobs: parts.jobs, rules: parts.rules, limits: this.limits, dispatch: parts.dispatch, newAttemptId,
      mono: this.mono, fired: (job, nowNs) => parts.observer?.fired(job, 'triggered', nowNs), noRule,
    });
    this.retrying = new Retrying({ changes: parts.changes, jobs: parts.jobs, rules: parts.rules, starts: this.starts, noRule, random: parts.random });
    parts.changes.onJobReplaced = (id) => this.limits.forgetJob(id);
    parts.changes.onRulesChanged = () => this.limits.markRulesChanged();
  }

  /**
   * Applies the results that came in, for at most `budgetMs` (checked every RESULT_CHUNK): a
   * burst of results (10 000 webhooks answering at once, each a retry to persist) is applied
   * over several turns, like a burst of due jobs, so no turn of the primary is long. True when
   * results are left for the next step.
   */
  applyResults(nowNs: bigint, budgetMs = RESULT_SLICE_MS): boolean {
    const { changes, observer, attempts, results } = this.p;
    const started = performance.now();
    for (let n = 1; ; n++) {
      if (n % RESULT_CHUNK === 0 && performance.now() - started >= budgetMs) return results.length > 0;
      const r = results.shift();
      if (r === undefined) return false;
      if (r.durable !== undefined) this.durables.push(r.durable);
      this.limits.finished(r.attempt);
      if (changes.attemptOf(r.jobId) !== r.attempt) continue; // stale attempt
      if (r.record !== undefined) attempts?.record(r.jobId, r.record);
      if (this.retrying.retried(r, r.record, nowNs)) continue;
      changes.setStatus(r.jobId, r.success ? 'executed' : 'failed');
      observer?.finished(r.jobId, r.success, r.record);
    }
  }

  /** The `durable` callbacks of the results applied since the last call, for the commit that follows. */
  takeDurables(): Array<() => void> {
    const taken = this.durables;
    if (taken.length > 0) this.durables = [];
    return taken;
  }

  /**
   * What waited for a limit and is now admitted, then the retries come due; true when more
   * retries were due than one slice.
   */
  fireWaiting(nowNs: bigint): boolean {
    this.starts.release(nowNs);
    return this.retrying.fireDue(nowNs);
  }

  /**
   * Cluster mode, stepping down: nothing waits or counts here any more. Returns the due jobs
   * that waited for a limit: `planned` but taken off the due heap, for the caller to arm again.
   */
  forget(): string[] {
    this.retrying.clear();
    return this.limits.clear().filter((w) => w.kind === 'due').map((w) => w.job.id);
  }

  /**
   * Cluster mode, taking over (lib/placement/): `attempt` still runs on a node, or ran and its
   * result is on its way, so it is job `jobId`'s current attempt again: its result counts, and
   * the job is not dispatched again. False when the job is no longer what that attempt ran.
   */
  adopt(jobId: string, attempt: string, execution: bigint, attemptNo: number): boolean {
    const { changes, jobs, rules } = this.p;
    const job = jobs.get(jobId);
    if (job === undefined || job.status !== 'triggered' || job.execution !== execution || job.retryAt !== undefined
      || (job.attempt ?? 1) !== attemptNo || changes.attemptOf(jobId) !== undefined) return false;
    changes.retry(jobId, attempt);
    const rule = rules.match(jobId);
    if (rule !== undefined) this.limits.started(rule, attempt, this.mono(), false); // its start counted once, when it started
    return true;
  }

  /**
   * Cluster mode: the node running `attempt` was lost, so job `jobId` runs again elsewhere under
   * a new attempt (a late result of the lost one is stale). False when it was not current.
   */
  rerun(jobId: string, attempt: string, nowNs: bigint): boolean {
    const { changes, jobs, rules } = this.p;
    if (changes.attemptOf(jobId) !== attempt) return false;
    this.limits.finished(attempt);
    changes.dropAttempt(jobId);
    const job = jobs.get(jobId)!;
    const rule = rules.match(jobId);
    if (rule === undefined) this.failNoRule(job, nowNs);
    else this.starts.offer(job, rule, 'again', job.attempt ?? 1, job.execution, nowNs);
    return true;
  }

  /** A job come due (or waiting) that no rule matches: failed, with its attempt record. */
  private failNoRule(job: Job, nowNs: bigint): void {
    this.p.changes.setStatus(job.id, 'failed');
    const attempt = noRuleAttempt(job, nowNs);
    this.p.attempts?.record(job.id, attempt);
    this.p.observer?.finished(job.id, false, attempt);
  }

  /** Fires one slice of what is due at `nowNs`; true when more is due than one slice took. */
  fireDue(nowNs: bigint): boolean {
    const { changes, jobs } = this.p;
    const next = jobs.nextDue();
    if (next === undefined || next > nowNs) return false; // the idle tick: one comparison
    inSlice(FIRE_SLICE, FIRE_CHUNK, FIRE_SLICE_MS, (n) => changes.takeDue(nowNs, n), (chunk) => this.fireChunk(chunk, nowNs));
    const after = jobs.nextDue();
    return after !== undefined && after <= nowNs;
  }

  private fireChunk(chunk: readonly Job[], nowNs: bigint): void {
    const { rules, observer } = this.p;
    for (const job of chunk) {
      const rule = rules.match(job.id);
      if (rule === undefined) {
        observer?.fired(job, 'no-rule', nowNs);
        this.failNoRule(job, nowNs);
        continue;
      }
      this.starts.offer(job, rule, 'due', 1, job.execution, nowNs);
    }
  }

  /**
   * Dispatches again every `triggered` job no attempt of this process owns: one left so on
   * disk by an earlier process (at-least-once). A job this process fired carries its attempt
   * from fireDue on, so it is never dispatched twice, whenever this runs.
   */
  redispatchTriggered(nowNs: bigint): number {
    const { changes, jobs, rules } = this.p;
    let n = 0;
    for (const job of jobs.withStatus('triggered')) {
      if (changes.attemptOf(job.id) !== undefined) continue;
      if (job.retryAt !== undefined) {
        this.retrying.arm(job); // waits for its next attempt: not run before its time
        continue;
      }
      const rule = rules.match(job.id);
      if (rule === undefined) {
        this.failNoRule(job, nowNs);
        continue;
      }
      // The same attempt again, under its number: its execution key is the one it had.
      this.starts.offer(job, rule, 'again', job.attempt ?? 1, job.execution, nowNs);
      n++;
    }
    return n;
  }
}
