// When the leader has the cluster's checkpoint made (lib/jetstream/checkpoint.ts): once the
// stream holds enough records after the last one that reading them one by one costs a good
// part of what reading the checkpoint does. Made elsewhere (the compaction child process:
// CheckpointRunner), one at a time; its removals come back to the leader, which deletes them
// once every node has applied them (removal-deletions.ts).
//
// The rule: at least `minRecords` (--checkpoint-records) and at least a quarter of the live
// state written since the last checkpoint. A replay then reads at most a quarter of the state
// as single messages besides the checkpoint's chunks, and a stream of churning identifiers
// keeps at most about that many removals.
//
// A leader's first checkpoint is made from the whole stream: the removals the last leader had
// not deleted yet (reported to it, or not yet) are in none that follows, and the whole stream
// reports every removal still in it.
import type { ClusterOptions } from '../cli.ts';
import type { CheckpointMade } from '../jetstream/checkpoint-make.ts';
import type { Logger } from '../log.ts';
import { errorText } from '../errors.ts';

/** Makes a checkpoint of the cluster's stream now (`whole`: from the whole stream); null when nothing was new or another won. */
export type CheckpointRunner = (cluster: ClusterOptions, whole: boolean) => Promise<CheckpointMade | null>;

const LIVE_SHARE = 4;
/** After a failed attempt, the next waits this long. */
const RETRY_MS = 30_000;

export interface CheckpointScheduleOptions {
  readonly run: CheckpointRunner;
  readonly cluster: ClusterOptions;
  readonly log: Logger;
}

export class CheckpointSchedule {
  private readonly o: CheckpointScheduleOptions;
  /** The sequence of the last checkpoint known (made here, or found by the replay). */
  private seq = 0;
  private running = false;
  private retryAt = 0;
  /** The next is made from the whole stream: none was yet in this tenure. */
  private whole = true;
  private tenure = 0;

  constructor(opts: CheckpointScheduleOptions) {
    this.o = opts;
  }

  /** A checkpoint at `seq` exists (the replay started from it). */
  known(seq: number): void {
    this.seq = Math.max(this.seq, seq);
  }

  /** A new tenure as leader begins: its first checkpoint is made from the whole stream. */
  leading(): void {
    this.whole = true;
    this.tenure++;
  }

  /** Whether a checkpoint is being made. */
  get busy(): boolean {
    return this.running;
  }

  /**
   * Starts a checkpoint if one is due with the stream at `lastSeq` and `live` jobs and rules;
   * `made` gets its result (the removals it covers) if it is made.
   */
  consider(lastSeq: number, live: number, made: (m: CheckpointMade) => void): void {
    if (this.running || performance.now() < this.retryAt) return;
    if (lastSeq - this.seq < Math.max(this.o.cluster.checkpointRecords, Math.ceil(live / LIVE_SHARE))) return;
    this.running = true;
    const started = performance.now();
    const whole = this.whole;
    const tenure = this.tenure;
    this.o.run(this.o.cluster, whole).then((m) => {
      // Null: none was made (nothing new, or another maker's won): counted from here, as a
      // guess at where that one is, so that the next try comes an interval later.
      this.known(m?.seq ?? lastSeq);
      if (m === null) return;
      if (whole && tenure === this.tenure) this.whole = false;
      this.o.log.info({ seq: m.seq, records: m.records, bytes: m.bytes, read: m.read, removals: m.removals.length, whole, ms: Math.round(performance.now() - started) }, 'checkpoint made');
      made(m);
    }, (err: unknown) => {
      this.retryAt = performance.now() + RETRY_MS;
      this.o.log.warn({ err: errorText(err) }, 'making a checkpoint failed; trying again later');
    }).finally(() => { this.running = false; });
  }
}
