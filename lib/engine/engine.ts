// The engine: the primary's single owner of state. Command batches from the workers and the
// scheduler's ticks (lib/engine/firing.ts: which runner a due job gets) both run here,
// synchronously, through one table of handlers and one Changes tracker; each batch or tick
// then goes through the CommitQueue, so every change is durable before anyone hears of it.
// The engine persists through the Journal seam only (journal.ts). It also keeps what is told
// about executions beside the jobs: the last attempt of each job (lib/store/attempts.ts) and
// the per-second activity (activity.ts), both in memory only.
import type { Command, NodeWait, Reply } from '../domain/command.ts';
import type { ActivityView } from '../domain/activity.ts';
import type { Attempt } from '../domain/attempt.ts';
import type { StatValues } from '../domain/stat.ts';
import { internal } from '../errors.ts';
import type { Journal } from './journal.ts';
import type { JobStore } from '../store/jobs.ts';
import type { RuleStore } from '../store/rules.ts';
import { Changes } from './changes.ts';
import { CommitQueue } from './commit-queue.ts';
import type { EngineContext, Handler } from './commands/context.ts';
import { jobGet } from './commands/job-get.ts';
import { jobList } from './commands/job-list.ts';
import { jobRemove } from './commands/job-remove.ts';
import { jobSet } from './commands/job-set.ts';
import { jobRetry } from './commands/job-retry.ts';
import { ruleGet } from './commands/rule-get.ts';
import { ruleList } from './commands/rule-list.ts';
import { ruleRemove } from './commands/rule-remove.ts';
import { ruleSet } from './commands/rule-set.ts';
import { stat } from './commands/stat.ts';
import { cluster } from './commands/cluster.ts';
import { activity, metrics } from './commands/activity.ts';
import { LastAttempts } from '../store/attempts.ts';
import { wallNowNs } from '../clock.ts';
import { Firing, type Dispatch, type FiringObserver } from './firing.ts';
import { ExecutionResults } from './results.ts';
import { Lookahead, type Prepare } from './lookahead.ts';
import { ScheduleStore } from '../store/schedules.ts';
import type { SkipReason } from '../domain/schedule.ts';
import { Scheduling } from './scheduling.ts';
import { scheduleSet } from './commands/schedule-set.ts';
import { scheduleGet, scheduleNext, scheduleOccurrences } from './commands/schedule-get.ts';
import { scheduleList } from './commands/schedule-list.ts';
import { schedulePause, scheduleRemove, scheduleRun } from './commands/schedule-control.ts';

const HANDLERS: { readonly [Op in Command['op']]: Handler<Op> } = {
  'job.set': jobSet,
  'job.get': jobGet,
  'job.remove': jobRemove,
  'job.retry': jobRetry,
  'job.list': jobList,
  'rule.set': ruleSet,
  'rule.get': ruleGet,
  'rule.remove': ruleRemove,
  'rule.list': ruleList,
  'schedule.set': scheduleSet,
  'schedule.get': scheduleGet,
  'schedule.remove': scheduleRemove,
  'schedule.list': scheduleList,
  'schedule.next': scheduleNext,
  'schedule.pause': schedulePause,
  'schedule.run': scheduleRun,
  'schedule.occurrences': scheduleOccurrences,
  stat,
  cluster,
  activity,
  metrics,
};

export interface EngineObserver extends FiringObserver {
  commandApplied(cmd: Command, reply: Reply): void;
  /** A schedule's decision skipped `count` nominal times, for `reason` (lib/engine/scheduling.ts). */
  skipped?(reason: SkipReason, count: number): void;
}

export interface EngineOptions {
  readonly jobs: JobStore;
  readonly rules: RuleStore;
  /** The schedules (replayed already; a new store when not given). */
  readonly schedules?: ScheduleStore;
  /** Null while records of format `needs` may be written, else why not (cluster mode: format-mark.ts gate); none: always. */
  readonly formatRefused?: (needs: number) => string | null;
  /** Cluster mode: what a job's attempt waits for, if it waits for a node (lib/placement/); none: never. */
  readonly waitingForNode?: (id: string) => NodeWait | undefined;
  /** null in memory mode. */
  readonly journal: Journal | null;
  readonly dispatch: Dispatch;
  /** Told of the next due job's runner ahead of time (lib/engine/lookahead.ts); none: not told. */
  readonly prepare?: Prepare;
  readonly stat: () => StatValues;
  readonly observer?: EngineObserver;
  readonly onPersistError: (err: unknown) => void;
  readonly onCommandError?: (err: unknown) => void;
  /** Where the runner pool's results wait for the next tick (a new queue when not given). */
  readonly results?: ExecutionResults;
  /** The last attempt of each job (a new store of the default capacity when not given). */
  readonly attempts?: LastAttempts;
  /** GET /activity's source (none: the window is empty). */
  readonly activity?: () => ActivityView;
  /** The monotonic clock in ns for rate limits, and the draw for retry jitter (tests set them). */
  readonly mono?: () => bigint;
  readonly random?: () => number;
}

const NO_ACTIVITY = (): ActivityView => ({ intervalMs: 1000, buckets: [] });

export class Engine {
  private readonly changes: Changes;
  private readonly results: ExecutionResults;
  readonly attempts: LastAttempts;
  private readonly commits: CommitQueue;
  private readonly firing: Firing;
  private readonly lookahead: Lookahead | null;
  private readonly scheduling: Scheduling;
  private readonly ctx: EngineContext;
  private readonly observer: EngineObserver | undefined;
  private readonly onError: (err: unknown) => void;
  private firingHeld = false;
  private readonly jobs: JobStore;

  constructor(opts: EngineOptions) {
    this.onError = opts.onCommandError ?? (() => {});
    this.jobs = opts.jobs;
    const schedules = opts.schedules ?? new ScheduleStore();
    this.changes = new Changes(opts.jobs, opts.rules, opts.journal, schedules);
    this.commits = new CommitQueue(opts.journal, this.changes, opts.onPersistError);
    this.attempts = opts.attempts ?? new LastAttempts();
    this.scheduling = new Scheduling(this.changes, opts.jobs, schedules, (reason, count) => opts.observer?.skipped?.(reason, count));
    this.scheduling.armAll();
    this.ctx = {
      changes: this.changes, jobs: opts.jobs, rules: opts.rules, stat: opts.stat, attempts: this.attempts, activity: opts.activity ?? NO_ACTIVITY,
      scheduling: this.scheduling, formatRefused: opts.formatRefused ?? (() => null), waitingForNode: opts.waitingForNode ?? (() => undefined),
    };
    this.observer = opts.observer;
    this.results = opts.results ?? new ExecutionResults();
    this.firing = new Firing({
      changes: this.changes, jobs: opts.jobs, rules: opts.rules, results: this.results, dispatch: opts.dispatch, observer: opts.observer,
      attempts: this.attempts, mono: opts.mono, random: opts.random,
    });
    this.lookahead = opts.prepare === undefined ? null : new Lookahead(opts.jobs, opts.rules, opts.prepare);
  }

  /** Applies a batch now; `done` gets the replies once the batch's changes are durable. */
  submitBatch(cmds: readonly Command[], done: (replies: Reply[]) => void): void {
    const replies = new Array<Reply>(cmds.length);
    for (let i = 0; i < cmds.length; i++) replies[i] = this.execute(cmds[i]!);
    this.commits.commit(
      () => done(replies),
      () => done(replies.map(() => internal())),
    );
  }

  execute(cmd: Command): Reply {
    let reply: Reply;
    try {
      reply = (HANDLERS[cmd.op] as Handler<typeof cmd.op>)(this.ctx, cmd as never);
    } catch (err) {
      // A command that cannot be applied (a record over the format's limits, a store at its
      // capacity) fails alone: it never takes the batch, or the primary, down with it.
      this.onError(err);
      return internal();
    }
    this.observer?.commandApplied(cmd, reply);
    return reply;
  }

  /**
   * One scheduler step: apply finished executions, fire a slice of what is due (when that was
   * all of it, look ahead for the next due job: lib/engine/lookahead.ts), persist.
   * True when more was due than one slice: the caller runs the next step soon (tick.ts).
   * Once holdFiring() was called, a step only applies results and persists.
   */
  tick(nowNs: bigint): boolean {
    let more = false;
    try {
      more = this.firing.applyResults(nowNs);
      if (!this.firingHeld) {
        // What waited for a limit or a retry first, then schedules: an occurrence decided now
        // and due now fires in this same tick.
        more = this.firing.fireWaiting(nowNs) || more;
        more = this.scheduling.step(nowNs) || more;
        more = this.firing.fireDue(nowNs) || more;
        if (!more) this.lookahead?.check(nowNs);
      }
    } catch (err) {
      this.onError(err); // the loop must keep ticking; what was changed is still committed below
    }
    const durables = this.firing.takeDurables();
    if (this.changes.pending > 0 || durables.length > 0) this.commits.commit(durables.length === 0 ? noop : () => { for (const d of durables) d(); }, noop);
    return more;
  }

  /**
   * A graceful stop has begun: from now on nothing more fires (what comes due stays `planned`
   * and fires at the next start), while results go on being applied. Without it a job coming
   * due during the stop would start only to be aborted, and run again after the restart.
   */
  holdFiring(): void {
    this.firingHeld = true;
  }

  /**
   * The stop's last step before the journal closes, once no runner is left to report: applies
   * the results that came after the last tick and resolves once they are durable (or were
   * rolled back by a failed flush). A result dropped here would leave a job that ran to the
   * end `triggered` on disk, to run again at the next start.
   */
  settle(): Promise<void> {
    try {
      this.firing.applyResults(wallNowNs(), Infinity);
    } catch (err) {
      this.onError(err);
    }
    const durables = this.firing.takeDurables();
    return new Promise((resolve) => this.commits.commit(() => { for (const d of durables) d(); resolve(); }, resolve));
  }

  /**
   * A runner finished; applied at the next tick (`record`: the attempt, kept as the job's last;
   * `durable`: told once it is applied and durable, ExecutionResult.durable).
   */
  result(jobId: string, attempt: string, success: boolean, record?: Attempt, durable?: () => void): void {
    this.results.push(jobId, attempt, success, record, durable);
  }

  /**
   * Cluster mode, on stepping down: this engine no longer follows the executions still
   * running (their nodes send their results to the next leader, which adopts them:
   * lib/placement/) and applies no result waiting for a tick. The last attempts go too: the
   * next leader tells its own.
   */
  forget(): void {
    this.changes.forgetAttempts();
    this.results.take();
    this.attempts.clear();
    for (const id of this.firing.forget()) this.jobs.setStatus(id, 'planned'); // armed again, nothing written
  }

  /**
   * Cluster mode, on taking over: every schedule armed from the copy the stream built (a
   * follower's tail puts schedules in the store without arming them).
   */
  armSchedules(): void {
    this.scheduling.armAll();
  }

  /** Cluster mode, taking over: an attempt a node still runs is the job's current one again (Firing.adopt). */
  adopt(jobId: string, attempt: string, execution: bigint, attemptNo: number): boolean {
    return this.firing.adopt(jobId, attempt, execution, attemptNo);
  }

  /** Cluster mode: the node running `attempt` was lost; the job runs again under a new attempt (Firing.rerun). */
  rerun(jobId: string, attempt: string, nowNs: bigint = wallNowNs()): boolean {
    let done = false;
    try {
      done = this.firing.rerun(jobId, attempt, nowNs);
    } catch (err) {
      this.onError(err);
    }
    if (this.changes.pending > 0) this.commits.commit(noop, noop);
    return done;
  }

  /** After replay, before the first tick: jobs left `triggered` on disk run again (at-least-once). */
  redispatchTriggered(nowNs: bigint = wallNowNs()): number {
    return this.firing.redispatchTriggered(nowNs);
  }
}

const noop = (): void => {};
