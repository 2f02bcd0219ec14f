// Which node holds the lease, as this node hears of it: a watch of the lease key, and
// report()'s read of it once a second should the watch be down. A new holder means the leader
// changed, so that the batches this node forwarded to the old one stop waiting for its answer
// (ForwardClient.leaderChanged): a client's connection is not held up for the whole answer
// wait by a leader that died. Refreshes (the same holder) and deletions change nothing: a
// leader that is merely slow keeps the batches it holds.
import type { KV, KvEntry } from '@nats-io/kv';
import { errorText } from '../errors.ts';
import { describeHolder } from '../lease/value.ts';
import type { Logger } from '../log.ts';

const RETRY_PAUSE_MS = 500;

export class LeaseWatch {
  private readonly kv: KV;
  private readonly log: Logger;
  private readonly changed: () => void;
  private readonly heard: (holder: string) => void;
  /** The holder of the latest PUT seen, and the latest revision: a later one with another holder is a change. */
  private holder: string | null = null;
  private revision = 0;
  private watching = false;
  private stopWatch: (() => void) | null = null;

  /** `heard`: each holder of a PUT (the address of forwarded batches); `changed`: a new holder after another. */
  constructor(kv: KV, log: Logger, changed: () => void, heard: (holder: string) => void) {
    this.kv = kv;
    this.log = log;
    this.changed = changed;
    this.heard = heard;
  }

  /** Follows the key until stop(), started again after a failure. */
  start(): void {
    if (this.watching) return;
    this.watching = true;
    void this.follow();
  }

  stop(): void {
    this.watching = false;
    this.stopWatch?.();
  }

  /**
   * An entry of the lease key, watched or read; revisions older than one already seen are
   * ignored (a read answered late). The first holder seen is no change.
   */
  saw(entry: KvEntry): void {
    if (entry.revision <= this.revision) return;
    this.revision = entry.revision;
    if (entry.operation !== 'PUT') return;
    const { holder } = describeHolder(entry);
    const before = this.holder;
    this.holder = holder;
    this.heard(holder);
    if (before !== null && before !== holder) this.changed();
  }

  private async follow(): Promise<void> {
    while (this.watching) {
      try {
        const it = await this.kv.watch({ key: 'leader' });
        this.stopWatch = () => it.stop();
        if (!this.watching) it.stop();
        for await (const e of it) this.saw(e);
      } catch (err) {
        if (this.watching) this.log.debug({ err: errorText(err) }, 'watching the lease key failed; again');
      }
      if (this.watching) await new Promise((r) => setTimeout(r, RETRY_PAUSE_MS));
    }
  }
}
