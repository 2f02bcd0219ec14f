// The one choke point through which state changes: every mutation of the job and rule stores
// goes through Changes, which (1) applies it in memory, (2) appends its full-state record to
// the journal, and (3) remembers the previous value so that a failed fsync can roll it back.
import type { Job, JobStatus } from '../domain/job.ts';
import type { Rule } from '../domain/rule.ts';
import type { Journal, LogRecord } from '../logfile/record.ts';
import type { JobStore } from '../store/jobs.ts';
import type { RuleStore } from '../store/rules.ts';

export type UndoEntry =
  | { readonly k: 'job'; readonly id: string; readonly prev: Job | undefined; readonly attempt: string | undefined }
  | { readonly k: 'rule'; readonly id: string; readonly prev: Rule | undefined };

export class Changes {
  readonly jobs: JobStore;
  readonly rules: RuleStore;
  /** jobId -> id of the attempt whose result may still change the job (decisions §4). */
  readonly attempts = new Map<string, string>();
  private readonly journal: Journal | null;
  private undo: UndoEntry[] = [];

  constructor(jobs: JobStore, rules: RuleStore, journal: Journal | null) {
    this.jobs = jobs;
    this.rules = rules;
    this.journal = journal;
  }

  get pending(): number {
    return this.undo.length;
  }

  /** Hands over the undo entries of everything changed since the last call. */
  take(): UndoEntry[] {
    const taken = this.undo;
    this.undo = [];
    return taken;
  }

  // Each mutation changes memory first (a store refuses, e.g. at capacity, before changing
  // anything), then appends its record; if the record cannot be appended (over the format's
  // limits) the one change is undone at once, so memory and journal never disagree.

  putJob(job: Job, attempt?: string): void {
    this.change(() => this.jobEntry(job.id), () => {
      this.jobs.put(job);
      this.setAttempt(job.id, attempt);
    }, { t: 'job', job });
  }

  setStatus(id: string, status: JobStatus, attempt?: string): void {
    const prev = this.jobs.get(id);
    if (prev === undefined) return;
    this.change(() => ({ k: 'job', id, prev, attempt: this.attempts.get(id) }), () => {
      this.jobs.setStatus(id, status);
      this.setAttempt(id, attempt);
    }, { t: 'job', job: { id, execution: prev.execution, status } });
  }

  deleteJob(id: string): void {
    this.change(() => this.jobEntry(id), () => {
      this.jobs.delete(id);
      this.attempts.delete(id);
    }, { t: 'job.removed', id });
  }

  putRule(rule: Rule): void {
    this.change(() => ({ k: 'rule', id: rule.id, prev: this.rules.get(rule.id) }), () => this.rules.put(rule), { t: 'rule', rule });
  }

  deleteRule(id: string): void {
    this.change(() => ({ k: 'rule', id, prev: this.rules.get(id) }), () => this.rules.delete(id), { t: 'rule.removed', id });
  }

  /** `undoEntry` is read before `mutate`; memory mode keeps none (nothing can fail later). */
  private change(undoEntry: () => UndoEntry, mutate: () => void, rec: LogRecord): void {
    const entry = this.journal === null ? null : undoEntry();
    mutate();
    if (this.journal === null || entry === null) return;
    try {
      this.journal.append(rec);
    } catch (err) {
      this.rollback([entry]);
      throw err;
    }
    this.undo.push(entry);
  }

  private jobEntry(id: string): UndoEntry {
    return { k: 'job', id, prev: this.jobs.get(id), attempt: this.attempts.get(id) };
  }

  /** Restores the state before `entries`, newest first. Nothing is journaled. */
  rollback(entries: readonly UndoEntry[]): void {
    for (let i = entries.length - 1; i >= 0; i--) {
      const e = entries[i]!;
      if (e.k === 'job') {
        if (e.prev === undefined) this.jobs.delete(e.id);
        else this.jobs.put(e.prev);
        this.setAttempt(e.id, e.attempt);
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
