// The seam through which the engine persists, and what it persists: full-state records (a
// job or rule as it now is) and removals. Replaying them in order rebuilds the store;
// replaying a prefix twice is harmless because every record states a whole value (this is
// what makes compaction crash-safe). The engine knows only this file: the logfile
// (lib/logfile/writer.ts) implements Journal, and so will any other durable log.
import type { Job } from '../domain/job.ts';
import type { Rule } from '../domain/rule.ts';

export type LogRecord =
  | { readonly t: 'job'; readonly job: Job }
  | { readonly t: 'rule'; readonly rule: Rule }
  | { readonly t: 'job.removed'; readonly id: string }
  | { readonly t: 'rule.removed'; readonly id: string };

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
