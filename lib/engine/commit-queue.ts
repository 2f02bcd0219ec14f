// Persistence before reply (the Redis beforeSleep order). Each group of changes (a command
// batch, or a scheduler tick) is released only once the journal says its records are durable,
// and groups are released strictly in order, so a read never answers ahead of a write it saw.
// If a flush fails, every group not yet released is rolled back newest-first and failed:
// memory then equals what is on disk, and no client was told OK for a lost write.
import type { Journal } from './journal.ts';
import type { Changes, UndoEntry } from './changes.ts';

interface Group {
  durable: boolean;
  readonly undo: UndoEntry[];
  readonly onDurable: () => void;
  readonly onFailed: () => void;
}

export class CommitQueue {
  private readonly journal: Journal | null;
  private readonly changes: Changes;
  private groups: Group[] = [];
  private readonly onError: (err: unknown) => void;

  constructor(journal: Journal | null, changes: Changes, onError: (err: unknown) => void) {
    this.journal = journal;
    this.changes = changes;
    this.onError = onError;
  }

  /** Closes the current group of changes; exactly one of the callbacks runs, later. */
  commit(onDurable: () => void, onFailed: () => void): void {
    const undo = this.changes.take();
    if (this.journal === null || (undo.length === 0 && this.groups.length === 0)) {
      onDurable();
      return;
    }
    const group: Group = { durable: undo.length === 0, undo, onDurable, onFailed };
    this.groups.push(group);
    if (undo.length === 0) return;
    this.journal.flush().then(
      () => {
        group.durable = true;
        this.release();
      },
      (err) => this.fail(group, err),
    );
  }

  get waiting(): number {
    return this.groups.length;
  }

  private release(): void {
    while (this.groups.length > 0 && this.groups[0]!.durable) this.groups.shift()!.onDurable();
  }

  private fail(group: Group, err: unknown): void {
    if (!this.groups.includes(group)) return; // already failed along with an earlier group
    this.onError(err);
    const failed = this.groups;
    this.groups = [];
    for (let i = failed.length - 1; i >= 0; i--) this.changes.rollback(failed[i]!.undo);
    for (const g of failed) g.onFailed();
  }
}
