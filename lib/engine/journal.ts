// The seam through which the engine persists, and what it persists: full-state records (a
// job or rule as it now is) and removals. Replaying them in order rebuilds the store;
// replaying a prefix twice is harmless because every record states a whole value (this is
// what makes compaction crash-safe). The engine knows only this file: the logfile
// (lib/logfile/writer.ts) implements Journal, and in cluster mode the stream does
// (lib/jetstream/journal.ts, handed to the engine while this node leads through
// lib/leadership/leader-journal.ts). applyRecord is the one way a record reaches the stores,
// whichever log it was read from.
import type { Job } from '../domain/job.ts';
import type { Rule } from '../domain/rule.ts';
import type { JobStore } from '../store/jobs.ts';
import type { RuleStore } from '../store/rules.ts';
import type { ScheduleState } from '../domain/schedule.ts';
import type { ScheduleStore } from '../store/schedules.ts';

export type LogRecord =
  | { readonly t: 'job'; readonly job: Job }
  | { readonly t: 'rule'; readonly rule: Rule }
  | { readonly t: 'job.removed'; readonly id: string }
  | { readonly t: 'rule.removed'; readonly id: string }
  /** A schedule as it now is, with how far it is decided (extension records of format 3). */
  | { readonly t: 'schedule'; readonly state: ScheduleState }
  | { readonly t: 'schedule.removed'; readonly id: string }
  /**
   * A format mark (doc/logfile-format.md, Extension records): the writer of the records that
   * follow works at format `version` (lib/domain/format.ts). It is about the log, not its
   * contents: it applies to nothing in the stores.
   */
  | { readonly t: 'format'; readonly version: number };

/**
 * The engine's only way to persist. append() buffers; flush() resolves once every record
 * appended before the call is durable (written, and fsynced when configured). Flushes that
 * overlap an in-progress write are coalesced into the next single write + fsync (group commit).
 * If a flush rejects, every record not yet durable has been discarded and the file is cut
 * back to its last durable length; the caller rolls back its in-memory changes.
 */
export interface Journal {
  append(rec: LogRecord): void;
  flush(): Promise<void>;
  close(): Promise<void>;
}

/**
 * What append() and flush() throw once a journal takes no more writes for good (cluster mode:
 * this node is not the leader). Said once where it happens; each refused write is expected.
 */
export class NotWritingError extends Error {
  override readonly name = 'NotWritingError';
}

/**
 * Puts a replayed record into the stores: applying one twice, or a prefix of the log again, is
 * harmless. Without a schedule store (cluster mode, which has no schedules yet) a schedule
 * record is refused.
 */
export function applyRecord(jobs: JobStore, rules: RuleStore, rec: LogRecord, schedules?: ScheduleStore): void {
  switch (rec.t) {
    case 'schedule':
    case 'schedule.removed':
      if (schedules === undefined) throw new Error('a schedule record where schedules are not kept (cluster mode has none yet)');
      if (rec.t === 'schedule') schedules.put(rec.state);
      else schedules.delete(rec.id);
      return;
    case 'job': jobs.put(rec.job); return;
    case 'rule': rules.put(rec.rule); return;
    case 'job.removed': jobs.delete(rec.id); return;
    case 'rule.removed': rules.delete(rec.id); return;
    // Reading it proved this tickd reads its format (the codec refuses a newer one): nothing to keep.
    case 'format': return;
    default: {
      // JSON.stringify would throw on a job's bigint execution: name the tag instead
      const never: never = rec;
      throw new Error(`unknown record type ${String((never as { t: unknown }).t)}`);
    }
  }
}
