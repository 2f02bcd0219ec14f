// Per-rule concurrency and rate limits (issue 38; tickd-protocol(7) RETRIES AND LIMITS): which
// attempts may start now, and the attempts that wait for their rule's limit, in the order they
// became due, each rule's apart so that one rule at its limit never holds up another.
//
// - Concurrency counts the executions started under a rule that has a limit of any kind, from
//   their start to their result (or the loss of the runner: a result all the same). A result
//   whose job was SET or REMOVEd meanwhile still frees its place: the process ran until then.
// - The rate is a sliding window (lib/domain/rate-window.ts) on the monotonic clock: a wall
//   clock stepped back or forth opens or shuts nothing.
// - Limits change live: a rule's window is kept while its rate is unchanged and made anew when
//   it changes; what waits is offered again, to the rule that now matches, after any RULE SET
//   or REMOVERULE (markRulesChanged).
// - A waiting attempt is forgotten when its job is SET or REMOVEd (forgetJob): the job's new
//   life starts from its own due time. Everything here is memory only: a job waiting for its
//   limit is `planned` (or `triggered`, waiting for a retry) on disk and comes due again after
//   a restart.
// Nothing here costs anything while no rule has a limit: every map stays empty.
import type { Job } from '../domain/job.ts';
import type { Rule } from '../domain/rule.ts';
import { Fifo } from '../domain/fifo.ts';
import { RateWindow } from '../domain/rate-window.ts';

/** What a waiting attempt is: a job come due, a retry come due, or a `triggered` job run again at a start. */
export type WaitKind = 'due' | 'retry' | 'again';

export interface Waiting {
  readonly job: Job;
  readonly kind: WaitKind;
  readonly attemptNo: number;
  /** When it was due (the job's time, or its retry's): its lateness is counted from here. */
  readonly dueNs: bigint;
  /** Wall time it began to wait (ns), for `held`. */
  readonly since: bigint;
}

export function limited(rule: Rule): boolean {
  const o = rule.options;
  return o !== undefined && (o.concurrency !== undefined || o.rate !== undefined);
}

export class RuleLimits {
  private readonly running = new Map<string, number>();
  /** attempt id -> rule id, for the attempts counted in `running`. */
  private readonly counted = new Map<string, string>();
  private readonly windows = new Map<string, RateWindow>();
  private readonly queues = new Map<string, Fifo<Waiting>>();
  /** job id -> its waiting entry (a queue's entry whose job is no longer here is skipped). */
  private readonly waiting = new Map<string, Waiting>();
  private changed = false;

  get size(): number {
    return this.waiting.size;
  }

  /** Whether `rule` may start one more attempt now (`monoNs`: the monotonic clock), nobody waiting before it. */
  admits(rule: Rule, monoNs: bigint, queueFirst = true): boolean {
    if (!limited(rule)) return true;
    if (queueFirst && (this.queues.get(rule.id)?.length ?? 0) > 0) return false;
    const o = rule.options!;
    if (o.concurrency !== undefined && (this.running.get(rule.id) ?? 0) >= o.concurrency) return false;
    return o.rate === undefined || this.window(rule).freeAt(monoNs) <= monoNs;
  }

  /** An attempt of `rule` started (after admits() said yes). */
  started(rule: Rule, attempt: string, monoNs: bigint, rated = true): void {
    if (!limited(rule)) return;
    this.running.set(rule.id, (this.running.get(rule.id) ?? 0) + 1);
    this.counted.set(attempt, rule.id);
    if (rated && rule.options!.rate !== undefined) this.window(rule).tryStart(monoNs);
  }

  /** A result of `attempt` arrived (current or stale). */
  finished(attempt: string): void {
    if (this.counted.size === 0) return;
    const ruleId = this.counted.get(attempt);
    if (ruleId === undefined) return;
    this.counted.delete(attempt);
    const n = (this.running.get(ruleId) ?? 1) - 1;
    if (n <= 0) this.running.delete(ruleId);
    else this.running.set(ruleId, n);
  }

  /** How many attempts of rule `ruleId` run now (counted ones). */
  runningOf(ruleId: string): number {
    return this.running.get(ruleId) ?? 0;
  }

  hold(rule: Rule, w: Waiting): void {
    let q = this.queues.get(rule.id);
    if (q === undefined) {
      q = new Fifo<Waiting>();
      this.queues.set(rule.id, q);
    }
    q.push(w);
    this.waiting.set(w.job.id, w);
  }

  forgetJob(jobId: string): void {
    if (this.waiting.size > 0) this.waiting.delete(jobId);
  }

  markRulesChanged(): void {
    if (this.waiting.size > 0) this.changed = true;
  }

  /**
   * Hands `start` each waiting attempt its rule now admits, in order, each rule's queue apart
   * (`ruleOf`: the rule a queue's id now names; undefined when it is gone, and then all of that
   * queue, for the caller to offer again). `start` counts what it starts (started()) before the
   * next is looked at. After a rule change, every waiting attempt goes to `start` at once, in
   * due order, rule undefined: the caller offers each to the rule that now matches.
   */
  release(monoNs: bigint, ruleOf: (id: string) => Rule | undefined, start: (w: Waiting, rule: Rule | undefined) => void): void {
    if (this.waiting.size === 0) {
      if (this.queues.size > 0) this.queues.clear();
      return;
    }
    if (this.changed) {
      this.changed = false;
      const all = [...this.waiting.values()].sort((a, b) => (a.dueNs < b.dueNs ? -1 : a.dueNs > b.dueNs ? 1 : 0));
      this.waiting.clear();
      this.queues.clear();
      for (const w of all) start(w, undefined);
      return;
    }
    for (const [ruleId, q] of this.queues) {
      const rule = ruleOf(ruleId);
      while (q.length > 0) {
        const w = q.peek()!;
        if (this.waiting.get(w.job.id) !== w) { q.shift(); continue; } // forgotten
        if (rule !== undefined && !this.admits(rule, monoNs, false)) break;
        q.shift();
        this.waiting.delete(w.job.id);
        start(w, rule);
      }
      if (q.length === 0) this.queues.delete(ruleId);
    }
  }

  /** Cluster mode, stepping down: nothing runs or waits here any more; what waited, for the caller to re-arm. */
  clear(): Waiting[] {
    const waited = [...this.waiting.values()];
    this.running.clear();
    this.counted.clear();
    this.windows.clear();
    this.queues.clear();
    this.waiting.clear();
    this.changed = false;
    return waited;
  }

  private window(rule: Rule): RateWindow {
    const rate = rule.options!.rate!;
    let w = this.windows.get(rule.id);
    if (w === undefined || w.limit !== rate.limit || w.perNs !== rate.per) {
      w = new RateWindow(rate.limit, rate.per);
      this.windows.set(rule.id, w);
    }
    return w;
  }
}
