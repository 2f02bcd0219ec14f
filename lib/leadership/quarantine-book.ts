// A node's account of the stream messages it quarantined (lib/jetstream/quarantine.ts): each
// counted, named in a warning (at most WARNINGS_PER_MINUTE a minute, the rest counted in one),
// and, while the node leads, deleted from the stream by its sequence so that the log stays
// clean; and of the records they pushed out that this node owes the stream (restore.ts). A node deletes only once it has verified at least one record with its keys: a node
// started with the wrong --cluster-secret-file would otherwise take every record for junk and
// delete the cluster's log; it says so instead.
import type { EntryKind } from '../jetstream/restore.ts';
import type { JetStreamManager } from '@nats-io/jetstream';
import { errorText } from '../errors.ts';
import { alreadyGone } from '../jetstream/api-errors.ts';
import type { ClusterKeys } from '../jetstream/cluster-keys.ts';
import type { Quarantined, StreamTrust } from '../jetstream/quarantine.ts';
import type { Claim } from '../jetstream/owed-claims.ts';
import type { Stray } from '../jetstream/restore.ts';
import type { LogRecord } from '../engine/journal.ts';
import type { Logger } from '../log.ts';

const WARNINGS_PER_MINUTE = 20;
/** Sequences held for deletion at most: a flood beyond it is deleted by a later replay's count. */
const MAX_PENDING = 100_000;

export interface QuarantineBookOptions {
  readonly keys: ClusterKeys;
  readonly log: Logger;
  readonly counted: () => void;
  /** The identifier of a message's subject (restore.ts identifierOf), null for no identifier's. */
  readonly identifierOf: (subject: string) => { readonly kind: EntryKind; readonly id: string } | null;
  /** The copy's record of an identifier (restore.ts copyRecord): what a foreign message on its subject pushed out. */
  readonly owe: (kind: EntryKind, id: string) => LogRecord;
}

export class QuarantineBook implements StreamTrust {
  readonly keys: ClusterKeys;
  private readonly o: QuarantineBookOptions;
  /** Quarantined since the start. */
  total = 0;
  private verifiedRecords = 0;
  /**
   * The records foreign messages pushed out, by the message's sequence, taken from the copy
   * when the message was met while the copy was current (following, or leading): what this
   * node owes the stream until it, or another node, has written them again. Kept when the
   * copy is rebuilt (the rebuilt copy lacks them), so a take-over that fails, or a lease lost
   * while restoring, does not lose them.
   */
  private readonly owed = new Map<number, Stray>();
  /**
   * Identifiers' subjects the copy cannot speak for: a foreign message was there when it was
   * built, so it lacks their record, until a record of the cluster's on them is applied.
   */
  private readonly unknownOn = new Set<string>();
  /** The sequence owed on each subject: a record written there since settles it. */
  private readonly owedOn = new Map<string, number>();
  /** False while the copy is built from the stream: a message met then pushed out a record the copy never had. */
  private current = false;
  /** True while the copy is a tenure's that just ended: the acknowledged state, so what it owes is certain (owed-claims.ts). */
  private leaderCopy = false;
  /** What was quarantined on no identifier's subject and is not deleted yet, by sequence. */
  private readonly pending = new Set<number>();
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
    // On an identifier's subject a foreign message pushed a record out: it is written over,
    // never deleted (a node that owes the record would then take the empty subject for a
    // removal deleted since). Elsewhere it is deleted.
    const ident = this.o.identifierOf(q.subject);
    if (ident === null) {
      if (q.deletable && this.pending.size < MAX_PENDING) this.pending.add(q.seq);
    } else if (!this.current || q.behind === true || this.unknownOn.has(q.subject)) {
      // Met while the copy was built (or by the tail before it reached the end once), or after
      // one so met: the copy may never have had the record's last write.
      if (this.unknownOn.size < MAX_PENDING) this.unknownOn.add(q.subject);
    } else if (this.owed.size < MAX_PENDING) {
      this.owed.set(q.seq, { seq: q.seq, subject: q.subject, owed: this.o.owe(ident.kind, ident.id), certain: this.leaderCopy });
      this.owedOn.set(q.subject, q.seq);
    }
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
   * What a node taking over writes again (restore.ts): the records it owes. Those of messages
   * sealed with a key this node does not have too: anyone can write a key id.
   */
  strays(): Stray[] {
    return this.trusted() ? [...this.owed.values()] : [];
  }

  /** What this node owes, as its report tells the other nodes (owed-claims.ts). */
  claims(): Claim[] {
    return this.strays().flatMap((s) => (s.owed === undefined ? [] : [{ seq: s.seq, subject: s.subject, owed: s.owed, certain: s.certain === true }]));
  }

  /** Runs `meet` (a read of the stream after a tenure's last write) with what it owes taken as certain. */
  async asLeaderCopy<T>(meet: () => Promise<T>): Promise<T> {
    this.leaderCopy = true;
    try {
      return await meet();
    } finally {
      this.leaderCopy = false;
    }
  }

  /** The record owed for the message at `seq` (met by a restore's scan, just now), if this copy can say. */
  owedAt(seq: number): LogRecord | undefined {
    return this.owed.get(seq)?.owed;
  }

  /** Dealt with (restore.ts): no longer owed. */
  settled(seqs: readonly number[]): void {
    for (const seq of seqs) {
      const s = this.owed.get(seq);
      if (s === undefined) continue;
      this.owed.delete(seq);
      if (this.owedOn.get(s.subject) === seq) this.owedOn.delete(s.subject);
    }
  }

  /**
   * A record of the cluster's applied on `subject` as of stream sequence `seq`: written after
   * what is owed there (another node wrote it again, or a client wrote it since), it settles it.
   */
  written(subject: string, seq: number): void {
    this.unknownOn.delete(subject);
    const owed = this.owedOn.get(subject);
    if (owed !== undefined && seq > owed) this.settled([owed]);
  }

  /** The copy is being built anew from the stream: what it meets until following() is not its to restore. */
  rebuilding(): void {
    this.pending.clear();
    this.current = false;
  }

  /** The copy is current: it follows the stream (and, leading, is what the stream should hold). */
  following(): void {
    this.current = true;
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
    const seqs = [...this.pending];
    void (async () => {
      for (const seq of seqs) {
        try {
          await jsm.streams.deleteMessage(stream, seq, false);
          this.pending.delete(seq);
        } catch (err) {
          if (alreadyGone(err)) this.pending.delete(seq);
          else break;
        }
      }
    })().finally(() => { this.deleting = false; });
  }
}
