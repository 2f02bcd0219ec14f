// A node's copy as the source of records a foreign message pushed out of the stream
// (lib/jetstream/restore.ts): at take-over, and when a write of the leader's was refused
// because someone else wrote. Either way the lease is held, so the node is the one writer.
// What the node owes the stream (quarantine-book.ts) stays owed until a restore settles it,
// whatever happens to the copy meanwhile.
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { applyRecord, type LogRecord } from '../engine/journal.ts';
import { errorText } from '../errors.ts';
import type { StreamJournal } from '../jetstream/journal.ts';
import type { Claim } from '../jetstream/owed-claims.ts';
import { noteStrays, restoreOverStrays, type RestoreOptions, type RestoreOutcome, type Stray } from '../jetstream/restore.ts';
import type { ClusterSubjects } from '../jetstream/subjects.ts';
import type { Lease } from '../lease/lease.ts';
import type { Logger } from '../log.ts';
import type { JobStore } from '../store/jobs.ts';
import type { RuleStore } from '../store/rules.ts';
import type { ScheduleStore } from '../store/schedules.ts';
import type { EntryKind } from '../jetstream/restore.ts';
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
  readonly schedules: ScheduleStore;
  readonly log: Logger;
}

/**
 * What to write again on an identifier's subject: the copy's job or rule, or its removal when
 * the copy has none (a removal pushed out could let a checkpoint's older copy of it come back).
 */
export function copyRecord(p: { readonly jobs: JobStore; readonly rules: RuleStore; readonly schedules: ScheduleStore }, kind: EntryKind, id: string): LogRecord {
  if (kind === 'schedule') {
    const state = p.schedules.get(id);
    return state === undefined ? { t: 'schedule.removed', id } : { t: 'schedule', state };
  }
  if (kind === 'job') {
    const job = p.jobs.get(id);
    return job === undefined ? { t: 'job.removed', id } : { t: 'job', job };
  }
  const rule = p.rules.get(id);
  return rule === undefined ? { t: 'rule.removed', id } : { t: 'rule', rule };
}

/** restoreOverStrays from the node's copy, what it owes and what `others` owe, while `lease` is held; settles what it dealt with. */
async function restoreFromCopy(p: CopyParts, writerId: string, lease: Lease, afterSeq: number, known: readonly Stray[], others: readonly Claim[] = []): Promise<RestoreOutcome> {
  const outcome = await restoreOverStrays(restoreOptions(p, writerId, () => lease.held), afterSeq, known, others);
  if ('settled' in outcome) p.book.settled(outcome.settled);
  return outcome;
}

function restoreOptions(p: CopyParts, writerId: string, mayWrite: () => boolean): RestoreOptions {
  const { js, jsm, subjects, book, log } = p;
  const wrote = (rec: LogRecord, subject: string, seq: number): void => {
    applyRecord(p.jobs, p.rules, rec, p.schedules);
    book.written(subject, seq);
  };
  return { js, jsm, subjects, trust: book, writerId, owedAt: (seq) => book.owedAt(seq), mayWrite, wrote, log };
}

/**
 * At take-over, before the first write: the last sequence once what is owed is written again
 * (what this node owes, and what the other nodes' reports say they owe); throws on another writer.
 */
export async function restoreAtTakeOver(p: CopyParts, writerId: string, lease: Lease, afterSeq: number, others: readonly Claim[]): Promise<number> {
  const owed = p.book.strays();
  if (owed.length === 0 && others.length === 0) return afterSeq;
  const restored = await restoreFromCopy(p, writerId, lease, afterSeq, owed, others);
  if ('otherWriter' in restored) throw new Error(`another writer wrote to the stream: ${restored.otherWriter}`);
  return restored.lastSeq;
}

/**
 * After the leader's journal was fenced and closed (its failed writes rolled back, so the copy
 * is the acknowledged state): what foreign messages after its last write pushed out is owed
 * as certain (owed-claims.ts), and, when the fence was such a message and the lease is still
 * held, put back. Never throws: the node rebuilds its copy after, and what could not be put
 * back stays owed, and is told to the other nodes in this node's reports.
 */
export async function restoreAfterFence(p: CopyParts, stream: StreamJournal, lease: Lease, stopping: boolean): Promise<void> {
  const after = stream.foreignAfter;
  try {
    await p.book.asLeaderCopy(async () => {
      if (after === null || !lease.held) {
        // A node that stops takes what it would owe with it (its report is deleted): no read.
        if (stopping) return;
        await noteStrays(restoreOptions(p, stream.writerId, () => false), after ?? stream.lastSeq);
        return;
      }
      const restored = await restoreFromCopy(p, stream.writerId, lease, after, p.book.strays());
      if ('otherWriter' in restored) p.log.warn({ why: restored.otherWriter }, 'another writer wrote to the stream: this node rebuilds its copy from it');
    });
  } catch (err) {
    p.log.error({ err: errorText(err) }, 'putting back records pushed out of the stream failed; this node still owes them');
  }
}
