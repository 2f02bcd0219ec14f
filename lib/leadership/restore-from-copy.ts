// A node's copy as the source of records a foreign message pushed out of the stream
// (lib/jetstream/restore.ts): at take-over, and when a write of the leader's was refused
// because someone else wrote. Either way the lease is held, so the node is the one writer.
import type { LogRecord } from '../engine/journal.ts';
import { errorText } from '../errors.ts';
import type { StreamJournal } from '../jetstream/journal.ts';
import { restoreOverStrays, type RestoreOutcome, type Stray } from '../jetstream/restore.ts';
import type { Lease } from '../lease/lease.ts';
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { StreamTrust } from '../jetstream/quarantine.ts';
import type { ClusterSubjects } from '../jetstream/subjects.ts';
import type { Logger } from '../log.ts';
import type { JobStore } from '../store/jobs.ts';
import type { RuleStore } from '../store/rules.ts';

/** What of a node's parts (node.ts) a restore uses. */
export interface CopyParts {
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly subjects: ClusterSubjects;
  /** The node's quarantine book: the keys, and where foreign messages are counted. */
  readonly trust: StreamTrust;
  readonly jobs: JobStore;
  readonly rules: RuleStore;
  readonly log: Logger;
}

/** restoreOverStrays from the node's copy, while `lease` is held. */
export function restoreFromCopy(p: CopyParts, writerId: string, lease: Lease, afterSeq: number, known: readonly Stray[]): Promise<RestoreOutcome> {
  const { js, jsm, subjects, trust, jobs, rules, log } = p;
  const copyOf = (kind: 'job' | 'rule', id: string): LogRecord | undefined => {
    if (kind === 'job') {
      const job = jobs.get(id);
      return job === undefined ? undefined : { t: 'job', job };
    }
    const rule = rules.get(id);
    return rule === undefined ? undefined : { t: 'rule', rule };
  };
  return restoreOverStrays({ js, jsm, subjects, trust, writerId, copyOf, mayWrite: () => lease.held, log }, afterSeq, known);
}

/**
 * After the leader's journal was fenced and closed (its failed writes rolled back, so the copy
 * is the acknowledged state): when the fence was someone else's write and the lease is still
 * held, what that pushed out is put back. Never throws: the node rebuilds its copy after.
 */
export async function restoreAfterFence(p: CopyParts, stream: StreamJournal, lease: Lease): Promise<void> {
  const after = stream.foreignAfter;
  if (after === null || !lease.held) return;
  try {
    const restored = await restoreFromCopy(p, stream.writerId, lease, after, []);
    if ('otherWriter' in restored) p.log.warn({ why: restored.otherWriter }, 'another writer wrote to the stream: this node rebuilds its copy from it');
  } catch (err) {
    p.log.error({ err: errorText(err) }, 'putting back records pushed out of the stream failed');
  }
}
