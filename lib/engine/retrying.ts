// What comes of an attempt's result (issue 38; tickd-protocol(7) RETRIES AND LIMITS): a failure
// worth retrying (lib/domain/retry-policy.ts worthRetrying: in one of the policy's `on`
// classes, or its default ones) under a rule whose policy has attempts left makes the job
// wait for its next attempt, `triggered` with `retryAt`, persisted with the attempt's number
// before anyone hears of it; anything else ends the job `executed` or `failed`, keeping the
// number of its last attempt. When a retry comes due, the job is offered to the rule that
// matches it then (starts.ts), as attempt k + 1.
//
// - The policy is the one of the rule whose runner ran the attempt, as that rule is now: a
//   rule removed meanwhile retries nothing more, a policy changed meanwhile applies from the
//   next decision on.
// - The delay of attempt k + 1 runs from the end of attempt k (its start plus its duration),
//   so a slow failure does not eat its own backoff. A Retry-After the receiver sent (429 and
//   503) stretches it, capped by max_delay, when `on` retries that response at all.
// - The attempt's number and its next time are durable (a job record of format 4): a kill -9
//   between attempts keeps both, and the retry is armed again from the store at the next
//   start (armAll) or take-over. A result is applied once (the attempt map of changes.ts): an
//   attempt is never counted twice nor skipped.
import type { Attempt, AttemptOutcome } from '../domain/attempt.ts';
import type { Job } from '../domain/job.ts';
import { delayAfter, worthRetrying } from '../domain/retry-policy.ts';
import type { Changes, ReadonlyJobs } from './changes.ts';
import type { ExecutionResult } from './results.ts';
import { RetryTimers } from './retry-timers.ts';
import { inSlice } from './slice.ts';
import type { RuleStore } from '../store/rules.ts';
import type { Starts } from './starts.ts';

/**
 * Retries offered per step at most, by count and by time (checked every RETRY_CHUNK): the rest
 * on the next step, as a burst of due jobs is sliced (firing.ts).
 */
const RETRY_SLICE = 256;
const RETRY_SLICE_MS = 1;
const RETRY_CHUNK = 32;

export interface RetryingParts {
  readonly changes: Changes;
  readonly jobs: ReadonlyJobs;
  readonly rules: RuleStore;
  readonly starts: Starts;
  readonly noRule: (job: Job, nowNs: bigint) => void;
  /** A draw in [0, 1) for the policy's jitter. */
  readonly random?: (() => number) | undefined;
}

/** The receiver's Retry-After, if the outcome carries one (the http runner reads it on 429 and 503). */
function retryAfterOf(o: AttemptOutcome): bigint | null {
  if (o.kind !== 'http_response') return null;
  return o.retryAfterMs === undefined ? null : BigInt(Math.round(o.retryAfterMs)) * 1_000_000n;
}

export class Retrying {
  private readonly p: RetryingParts;
  private readonly timers = new RetryTimers();

  constructor(parts: RetryingParts) {
    this.p = parts;
  }

  /**
   * Decides a current attempt's failed result: true when the job now waits for another
   * attempt (persisted, armed), false when the caller ends it as before.
   */
  retried(r: ExecutionResult, record: Attempt | undefined, nowNs: bigint): boolean {
    if (r.success || record === undefined || record.rule === null) return false;
    const policy = this.p.rules.get(record.rule)?.options?.retry;
    if (policy === undefined || policy.attempts <= 1 || !worthRetrying(record.outcome, policy.on)) return false;
    const job = this.p.jobs.get(r.jobId);
    if (job === undefined) return false;
    const k = job.attempt ?? 1;
    const delay = delayAfter(policy, k, (this.p.random ?? Math.random)(), retryAfterOf(record.outcome));
    if (delay === null) return false;
    const ended = record.startedNs + record.durationNs;
    const at = (ended > nowNs ? nowNs : ended) + delay;
    this.p.changes.putJob({ id: job.id, execution: job.execution, status: 'triggered', attempt: k, retryAt: at });
    this.timers.arm(job.id, at);
    return true;
  }

  /** Offers the retries due at `nowNs`, a slice (RETRY_SLICE, or RETRY_SLICE_MS); true when more were due. */
  fireDue(nowNs: bigint): boolean {
    const next = this.timers.next();
    if (next === undefined || next > nowNs) return false;
    const { jobs, rules, starts } = this.p;
    inSlice(RETRY_SLICE, RETRY_CHUNK, RETRY_SLICE_MS, (n) => this.timers.takeDue(nowNs, n), (chunk) => {
      for (const e of chunk) {
        const job = jobs.get(e.id);
        if (job === undefined || job.status !== 'triggered' || job.retryAt !== e.at) continue; // SET, REMOVEd or re-armed since
        const rule = rules.match(job.id);
        if (rule === undefined) this.p.noRule(job, nowNs);
        else starts.offer(job, rule, 'retry', (job.attempt ?? 1) + 1, e.at, nowNs);
      }
    });
    const after = this.timers.next();
    return after !== undefined && after <= nowNs;
  }

  /** Arms a job's retry found in the store (start, take-over); arming one twice is harmless. */
  arm(job: Job): void {
    if (job.retryAt !== undefined) this.timers.arm(job.id, job.retryAt);
  }

  /** Cluster mode, stepping down: the next leader arms its own. */
  clear(): void {
    this.timers.clear();
  }
}
