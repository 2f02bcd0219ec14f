// The one choke point through which state changes: every mutation of the job and rule stores
// goes through Changes, which (1) applies it in memory (a store refuses, e.g. at capacity,
// before changing anything), (2) appends its full-state record to the journal, undoing the one
// change if the record cannot be appended, and (3) keeps the previous value so that a failed
// fsync can roll back everything not yet durable. Reads do not go through it: readers hold the
// stores as ReadonlyJobs / ReadonlyRules. It also keeps the attempt map (which attempt's result
// may still change a job), which nothing else can write.
import type { Job, JobStatus } from '../domain/job.ts';
import type { Rule } from '../domain/rule.ts';
import type { Journal, LogRecord } from './journal.ts';
import type { JobStore } from '../store/jobs.ts';
import type { RuleStore } from '../store/rules.ts';
import type { ScheduleState } from '../domain/schedule.ts';
import type { ScheduleStore } from '../store/schedules.ts';

export type UndoEntry =
  | { readonly k: 'job'; readonly id: string; readonly prev: Job | undefined; readonly attempt: string | undefined }
  | { readonly k: 'rule'; readonly id: string; readonly prev: Rule | undefined }
  | { readonly k: 'schedule'; readonly id: string; readonly prev: ScheduleState | undefined };

/** The job store as readers see it: no method that changes it. */
export type ReadonlyJobs = Pick<JobStore, 'size' | 'get' | 'statusOf' | 'page' | 'nextDue' | 'nextDueJob' | 'withStatus' | 'counts'>;
/** The rule store as readers see it. */
export type ReadonlyRules = Pick<RuleStore, 'size' | 'get' | 'page' | 'match'>;

export class Changes {
  private readonly jobs: JobStore;
  private readonly rules: RuleStore;
  /** jobId -> id of the attempt whose result may still change the job (doc/execution.md). */
  private readonly attempts = new Map<string, string>();
  private readonly journal: Journal | null;
  private readonly schedules: ScheduleStore;
  private undo: UndoEntry[] = [];
  /** Told of each schedule a rollback put back, so that its due time is found again. */
  onScheduleRestored: (id: string) => void = () => {};
  /** Told of each job put or deleted: an attempt waiting for its rule's limit is forgotten (rule-limits.ts). */
  onJobReplaced: (id: string) => void = () => {};
  /** Told of each rule put or deleted: what waits for a limit is offered again. */
  onRulesChanged: () => void = () => {};

  constructor(jobs: JobStore, rules: RuleStore, journal: Journal | null, schedules: ScheduleStore) {
    this.jobs = jobs;
    this.rules = rules;
    this.journal = journal;
    this.schedules = schedules;
  }

  get pending(): number {
    return this.undo.length;
  }

  /** The attempt whose result may still change job `id`, if any. */
  attemptOf(id: string): string | undefined {
    return this.attempts.get(id);
  }

  /** Forgets every attempt: the results of executions still running will be ignored. */
  forgetAttempts(): void {
    this.attempts.clear();
  }

  /** Job `id` has no current attempt any more (its node was lost: it runs again): nothing to persist. */
  dropAttempt(id: string): void {
    this.attempts.delete(id);
  }

  /** A new attempt for a job that stays `triggered` (re-dispatch after a restart): nothing to persist. */
  retry(id: string, attempt: string): void {
    this.attempts.set(id, attempt);
  }

  /**
   * Disarms and returns the jobs due at `nowNs` (JobStore.takeDue): they stay `planned` until
   * the caller sets each one's status through this class in the same tick.
   */
  takeDue(nowNs: bigint, limit: number): Job[] {
    return this.jobs.takeDue(nowNs, limit);
  }

  /** Hands over the undo entries of everything changed since the last call. */
  take(): UndoEntry[] {
    const taken = this.undo;
    this.undo = [];
    return taken;
  }

  // Every method reads its undo entry (only when there is a journal: memory mode cannot fail
  // later), mutates the store, then persists. No closures or records are allocated in memory
  // mode: this is the path of every write.

  putJob(job: Job, attempt?: string): void {
    this.onJobReplaced(job.id);
    if (this.journal === null) {
      this.jobs.put(job);
      this.setAttempt(job.id, attempt);
      return;
    }
    // The undo entry from put()'s own answer: one lookup of the id in a store of millions
    // fewer per SET (that lookup was the primary's largest cost under a SET load).
    const previousAttempt = this.attempts.get(job.id);
    const prev = this.jobs.put(job); // throws before changing anything: no entry needed then
    this.setAttempt(job.id, attempt);
    this.persist({ k: 'job', id: job.id, prev, attempt: previousAttempt }, { t: 'job', job });
  }

  setStatus(id: string, status: JobStatus, attempt?: string): void {
    const prev = this.jobs.get(id);
    if (prev === undefined) return;
    const entry = this.journal === null ? null : this.jobEntry(id, prev);
    this.jobs.setStatus(id, status);
    this.setAttempt(id, attempt);
    // The attempt number stays with the job (a retry's wait ends with any new status).
    if (entry !== null) this.persist(entry, { t: 'job', job: prev.attempt === undefined ? { id, execution: prev.execution, status } : { id, execution: prev.execution, status, attempt: prev.attempt } });
  }

  deleteJob(id: string): void {
    this.onJobReplaced(id);
    const entry = this.journal === null ? null : this.jobEntry(id);
    this.jobs.delete(id);
    this.attempts.delete(id);
    if (entry !== null) this.persist(entry, { t: 'job.removed', id });
  }

  putRule(rule: Rule): void {
    this.onRulesChanged();
    const entry: UndoEntry | null = this.journal === null ? null : { k: 'rule', id: rule.id, prev: this.rules.get(rule.id) };
    this.rules.put(rule);
    if (entry !== null) this.persist(entry, { t: 'rule', rule });
  }

  deleteRule(id: string): void {
    this.onRulesChanged();
    const entry: UndoEntry | null = this.journal === null ? null : { k: 'rule', id, prev: this.rules.get(id) };
    this.rules.delete(id);
    if (entry !== null) this.persist(entry, { t: 'rule.removed', id });
  }

  putSchedule(state: ScheduleState): void {
    const id = state.schedule.id;
    const entry: UndoEntry | null = this.journal === null ? null : { k: 'schedule', id, prev: this.schedules.get(id) };
    this.schedules.put(state);
    if (entry !== null) this.persist(entry, { t: 'schedule', state });
  }

  deleteSchedule(id: string): void {
    const entry: UndoEntry | null = this.journal === null ? null : { k: 'schedule', id, prev: this.schedules.get(id) };
    this.schedules.delete(id);
    if (entry !== null) this.persist(entry, { t: 'schedule.removed', id });
  }

  /** Appends the record of a change just made; a record that cannot be appended undoes it. */
  private persist(entry: UndoEntry, rec: LogRecord): void {
    try {
      this.journal!.append(rec);
    } catch (err) {
      this.rollback([entry]);
      throw err;
    }
    this.undo.push(entry);
  }

  private jobEntry(id: string, prev: Job | undefined = this.jobs.get(id)): UndoEntry {
    return { k: 'job', id, prev, attempt: this.attempts.get(id) };
  }

  /** Restores the state before `entries`, newest first. Nothing is journaled. */
  rollback(entries: readonly UndoEntry[]): void {
    for (let i = entries.length - 1; i >= 0; i--) {
      const e = entries[i]!;
      if (e.k === 'job') {
        if (e.prev === undefined) this.jobs.delete(e.id);
        else this.jobs.put(e.prev);
        this.setAttempt(e.id, e.attempt);
      } else if (e.k === 'schedule') {
        if (e.prev === undefined) this.schedules.delete(e.id);
        else this.schedules.put(e.prev);
        this.onScheduleRestored(e.id);
      } else if (e.prev === undefined) {
        this.rules.delete(e.id);
      } else {
        this.rules.put(e.prev);
      }
    }
  }

  private setAttempt(id: string, attempt: string | undefined): void {
    if (attempt === undefined) this.attempts.delete(id);
    else this.attempts.set(id, attempt);
  }
}
