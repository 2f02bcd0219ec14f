// The one choke point through which state changes: every mutation of the job and rule stores
// goes through Changes, which (1) applies it in memory, (2) appends its full-state record to
// the journal, and (3) remembers the previous value so that a failed fsync can roll it back.
import type { Job, JobStatus } from '../domain/job.ts';
import type { Rule } from '../domain/rule.ts';
import type { Journal } from '../logfile/record.ts';
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

  putJob(job: Job, attempt?: string): void {
    this.remember(job.id);
    this.jobs.put(job);
    this.setAttempt(job.id, attempt);
    this.journal?.append({ t: 'job', job });
  }

  setStatus(id: string, status: JobStatus, attempt?: string): Job | undefined {
    this.remember(id);
    this.jobs.setStatus(id, status);
    this.setAttempt(id, attempt);
    const job = this.jobs.get(id);
    if (job !== undefined) this.journal?.append({ t: 'job', job });
    return job;
  }

  deleteJob(id: string): void {
    this.remember(id);
    this.jobs.delete(id);
    this.attempts.delete(id);
    this.journal?.append({ t: 'job.removed', id });
  }

  putRule(rule: Rule): void {
    this.undo.push({ k: 'rule', id: rule.id, prev: this.rules.get(rule.id) });
    this.rules.put(rule);
    this.journal?.append({ t: 'rule', rule });
  }

  deleteRule(id: string): void {
    this.undo.push({ k: 'rule', id, prev: this.rules.get(id) });
    this.rules.delete(id);
    this.journal?.append({ t: 'rule.removed', id });
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

  private remember(id: string): void {
    if (this.journal === null) return; // memory mode: nothing can fail, nothing to undo
    this.undo.push({ k: 'job', id, prev: this.jobs.get(id), attempt: this.attempts.get(id) });
  }

  private setAttempt(id: string, attempt: string | undefined): void {
    if (attempt === undefined) this.attempts.delete(id);
    else this.attempts.set(id, attempt);
  }
}
