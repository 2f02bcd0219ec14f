// A node's copy as the source of records a foreign message pushed out of the stream
// (lib/jetstream/restore.ts): at take-over, and when a write of the leader's was refused
// because someone else wrote. Either way the lease is held, so the node is the one writer.
// What the node owes the stream (quarantine-book.ts) stays owed until a restore settles it,
// whatever happens to the copy meanwhile.
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { applyRecord, type LogRecord } from '../engine/journal.ts';
import { errorText } from '../errors.ts';
import type { StreamJournal } from '../jetstream/journal.ts';
import { restoreOverStrays, type RestoreOutcome, type Stray } from '../jetstream/restore.ts';
import type { ClusterSubjects } from '../jetstream/subjects.ts';
import type { Lease } from '../lease/lease.ts';
import type { Logger } from '../log.ts';
import type { JobStore } from '../store/jobs.ts';
import type { RuleStore } from '../store/rules.ts';
import type { QuarantineBook } from './quarantine-book.ts';

/** What of a node's parts (node.ts) a restore uses. */
export interface CopyParts {
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly subjects: ClusterSubjects;
  /** The node's quarantine book: the keys, where foreign messages are counted, and what is owed. */
  readonly book: QuarantineBook;
  readonly jobs: JobStore;
  readonly rules: RuleStore;
  readonly log: Logger;
}

/**
 * What to write again on an identifier's subject: the copy's job or rule, or its removal when
 * the copy has none (a removal pushed out could let a checkpoint's older copy of it come back).
 */
export function copyRecord(p: { readonly jobs: JobStore; readonly rules: RuleStore }, kind: 'job' | 'rule', id: string): LogRecord {
  if (kind === 'job') {
    const job = p.jobs.get(id);
    return job === undefined ? { t: 'job.removed', id } : { t: 'job', job };
  }
  const rule = p.rules.get(id);
  return rule === undefined ? { t: 'rule.removed', id } : { t: 'rule', rule };
}

/** restoreOverStrays from the node's copy and what it owes, while `lease` is held; settles what it dealt with. */
async function restoreFromCopy(p: CopyParts, writerId: string, lease: Lease, afterSeq: number, known: readonly Stray[]): Promise<RestoreOutcome> {
  const { js, jsm, subjects, book, log } = p;
  const wrote = (rec: LogRecord): void => applyRecord(p.jobs, p.rules, rec);
  const outcome = await restoreOverStrays({ js, jsm, subjects, trust: book, writerId, owedAt: (seq) => book.owedAt(seq), mayWrite: () => lease.held, wrote, log }, afterSeq, known);
  if ('settled' in outcome) book.settled(outcome.settled);
  return outcome;
}

/** At take-over, before the first write: the last sequence once what is owed is written again; throws on another writer. */
export async function restoreAtTakeOver(p: CopyParts, writerId: string, lease: Lease, afterSeq: number): Promise<number> {
  const owed = p.book.strays();
  if (owed.length === 0) return afterSeq;
  const restored = await restoreFromCopy(p, writerId, lease, afterSeq, owed);
  if ('otherWriter' in restored) throw new Error(`another writer wrote to the stream: ${restored.otherWriter}`);
  return restored.lastSeq;
}

/**
 * After the leader's journal was fenced and closed (its failed writes rolled back, so the copy
 * is the acknowledged state): when the fence was someone else's write and the lease is still
 * held, what that pushed out is put back. Never throws: the node rebuilds its copy after, and
 * what could not be put back stays owed (met while the copy was current, so taken from it).
 */
export async function restoreAfterFence(p: CopyParts, stream: StreamJournal, lease: Lease): Promise<void> {
  const after = stream.foreignAfter;
  if (after === null || !lease.held) return;
  try {
    const restored = await restoreFromCopy(p, stream.writerId, lease, after, p.book.strays());
    if ('otherWriter' in restored) p.log.warn({ why: restored.otherWriter }, 'another writer wrote to the stream: this node rebuilds its copy from it');
  } catch (err) {
    p.log.error({ err: errorText(err) }, 'putting back records pushed out of the stream failed; this node still owes them');
  }
}
