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

  // Each mutation appends its record BEFORE touching memory: append is where a record that
  // cannot be encoded throws, and then nothing has changed.

  putJob(job: Job, attempt?: string): void {
    this.journal?.append({ t: 'job', job });
    this.remember(job.id);
    this.jobs.put(job);
    this.setAttempt(job.id, attempt);
  }

  setStatus(id: string, status: JobStatus, attempt?: string): void {
    const prev = this.jobs.get(id);
    if (prev === undefined) return;
    this.journal?.append({ t: 'job', job: { id, execution: prev.execution, status } });
    this.undoJob(id, prev);
    this.jobs.setStatus(id, status);
    this.setAttempt(id, attempt);
  }

  deleteJob(id: string): void {
    this.journal?.append({ t: 'job.removed', id });
    this.remember(id);
    this.jobs.delete(id);
    this.attempts.delete(id);
  }

  putRule(rule: Rule): void {
    this.journal?.append({ t: 'rule', rule });
    this.undo.push({ k: 'rule', id: rule.id, prev: this.rules.get(rule.id) });
    this.rules.put(rule);
  }

  deleteRule(id: string): void {
    this.journal?.append({ t: 'rule.removed', id });
    this.undo.push({ k: 'rule', id, prev: this.rules.get(id) });
    this.rules.delete(id);
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
    this.undoJob(id, this.jobs.get(id));
  }

  private undoJob(id: string, prev: Job | undefined): void {
    if (this.journal === null) return;
    this.undo.push({ k: 'job', id, prev, attempt: this.attempts.get(id) });
  }

  private setAttempt(id: string, attempt: string | undefined): void {
    if (attempt === undefined) this.attempts.delete(id);
    else this.attempts.set(id, attempt);
  }
}
