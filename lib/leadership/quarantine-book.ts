// A node's account of the stream messages it quarantined (lib/jetstream/quarantine.ts): each
// counted, named in a warning (at most WARNINGS_PER_MINUTE a minute, the rest counted in one),
// and, while the node leads, deleted from the stream by its sequence so that the log stays
// clean. A node deletes only once it has verified at least one record with its keys: a node
// started with the wrong --cluster-secret-file would otherwise take every record for junk and
// delete the cluster's log; it says so instead.
import type { JetStreamManager } from '@nats-io/jetstream';
import { errorText } from '../errors.ts';
import type { ClusterKeys } from '../jetstream/cluster-keys.ts';
import type { Quarantined, StreamTrust } from '../jetstream/quarantine.ts';
import type { Stray } from '../jetstream/restore.ts';
import type { Logger } from '../log.ts';

const WARNINGS_PER_MINUTE = 20;
/** Sequences held for deletion at most: a flood beyond it is deleted by a later replay's count. */
const MAX_PENDING = 100_000;

export interface QuarantineBookOptions {
  readonly keys: ClusterKeys;
  readonly log: Logger;
  readonly counted: () => void;
}

export class QuarantineBook implements StreamTrust {
  readonly keys: ClusterKeys;
  private readonly o: QuarantineBookOptions;
  /** Quarantined since the start. */
  total = 0;
  private verifiedRecords = 0;
  /** What was quarantined and is not deleted yet, by sequence. */
  private readonly pending = new Map<number, { readonly subject: string; readonly deletable: boolean }>();
  private deleting = false;
  private minute = 0;
  private warned = 0;
  private unsaid = 0;
  private misconfiguredSaid = false;

  constructor(o: QuarantineBookOptions) {
    this.o = o;
    this.keys = o.keys;
  }

  /** A record verified and applied: this node's keys are the cluster's. */
  verified(): void {
    this.verifiedRecords++;
  }

  quarantined(q: Quarantined): void {
    this.total++;
    this.o.counted();
    if (this.pending.size < MAX_PENDING) this.pending.set(q.seq, { subject: q.subject, deletable: q.deletable });
    const minute = Math.floor(Date.now() / 60_000);
    if (minute !== this.minute) {
      if (this.unsaid > 0) this.o.log.warn({ count: this.unsaid }, 'more stream messages quarantined in the last minute');
      this.minute = minute;
      this.warned = 0;
      this.unsaid = 0;
    }
    if (this.warned++ < WARNINGS_PER_MINUTE) this.o.log.warn({ seq: q.seq, subject: q.subject, why: q.why }, 'stream message quarantined: not a record of this cluster');
    else this.unsaid++;
  }

  /**
   * The messages quarantined after `seq`, what a node taking over restores over (restore.ts):
   * only those its copy met after it was built from the stream, since only then did the copy
   * apply the record each one pushed out (a copy built after one of them lacks that record,
   * and must not write its removal over the other nodes' copies). Those sealed with a key
   * this node does not have too: anyone can write a key id.
   */
  strays(seq: number): Stray[] {
    if (!this.trusted()) return [];
    return [...this.pending].filter(([s]) => s > seq).map(([s, p]) => ({ seq: s, subject: p.subject }));
  }

  /** A copy is being built anew: what it met before is forgotten (met again, or gone). */
  rebuilding(): void {
    this.pending.clear();
  }

  /** Whether this node's keys verified any record: if not, it takes nothing for junk. */
  private trusted(): boolean {
    return this.total === 0 || this.verifiedRecords > 0;
  }

  /** While leading: deletes what was quarantined (one pass at a time; what fails stays for the next). */
  clear(jsm: JetStreamManager, stream: string): void {
    if (!this.trusted()) {
      if (!this.misconfiguredSaid) {
        this.misconfiguredSaid = true;
        this.o.log.error({ quarantined: this.total }, 'this node verified none of the stream\'s records: is --cluster-secret-file the one of the other nodes? Nothing quarantined is deleted');
      }
      return;
    }
    if (this.deleting || this.pending.size === 0) return;
    this.deleting = true;
    const seqs = [...this.pending].filter(([, p]) => p.deletable).map(([seq]) => seq);
    void (async () => {
      for (const seq of seqs) {
        try {
          await jsm.streams.deleteMessage(stream, seq, false);
          this.pending.delete(seq);
        } catch (err) {
          if (/no message found|not found/i.test(errorText(err))) this.pending.delete(seq);
          else break;
        }
      }
    })().finally(() => { this.deleting = false; });
  }
}
