// The engine's one journal in cluster mode, for the life of the process: it writes through the
// current tenure's stream journal while this node leads, and refuses every write otherwise
// (NotWritingError: the engine answers ERROR internal and rolls back, as for a failed fsync).
import { NotWritingError, type Journal, type LogRecord } from '../engine/journal.ts';

export class LeaderJournal implements Journal {
  private current: Journal | null = null;

  /** The tenure's journal, or null when this node stops leading. */
  use(journal: Journal | null): void {
    this.current = journal;
  }

  append(rec: LogRecord): void {
    if (this.current === null) throw new NotWritingError('not writing: this node is not the leader');
    this.current.append(rec);
  }

  flush(): Promise<void> {
    if (this.current === null) return Promise.reject(new NotWritingError('not writing: this node is not the leader'));
    return this.current.flush();
  }

  async close(): Promise<void> {
    const j = this.current;
    this.current = null;
    await j?.close();
  }
}
