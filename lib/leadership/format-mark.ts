// The cluster's active record format (tickd(8) UPGRADING; lib/domain/format.ts). Each node
// says the format its code reads (members.ts); the leader records in the stream, as a format
// mark, the highest format every node reads, once the nodes heard of have all read it for
// SETTLED_MS and every node this node saw on an older one (leading or not) has come back on
// it (a node stopped to be upgraded leaves the view at once, and may come back on its old
// version). A record of a kind that needs format N is written
// only once the stream's mark says N: every node then reads it, and a node that comes back
// older meets the mark and stops (quarantine.ts StreamTooNewError) instead of misreading
// what follows.
import { FIRST_EXTENSION_FORMAT, FORMAT_VERSION, ZTICK_FORMAT } from '../domain/format.ts';
import type { LogRecord } from '../engine/journal.ts';
import { errorText } from '../errors.ts';
import type { Logger } from '../log.ts';

/** How long every node heard of must have read a format before the leader records it. */
export const SETTLED_MS = 30_000;
/**
 * A node seen on an older format that left the view (stopped to be upgraded: a graceful stop
 * takes it out at once) holds the mark back until it is seen on this one, or this long.
 */
export const FORGET_BEHIND_MS = 10 * 60_000;

/** What of members.ts the mark needs. */
export interface FormatView {
  /** The format of each node heard of lately, by name. */
  formats(): ReadonlyMap<string, number>;
}

export class FormatMark {
  /** The highest mark of the stream this node's copy applied; 1 when none. */
  private marked = ZTICK_FORMAT;
  /** Since when (performance.now()) every node heard of reads FORMAT_VERSION; null while one does not. */
  private allSince: number | null = null;
  private writing = false;
  /** Nodes seen on a format below this code's, and when last: they hold the mark back. */
  private readonly behind = new Map<string, number>();

  get recorded(): number {
    return this.marked;
  }

  /** A record the copy applied (replay or tail). */
  seen(rec: LogRecord): void {
    if (rec.t === 'format' && rec.version > this.marked) this.marked = rec.version;
  }

  /** The copy is built anew from the stream. */
  rebuilding(): void {
    this.marked = ZTICK_FORMAT;
  }

  /**
   * Every node, at each report: which nodes read an older format, remembered when they leave
   * the view (so that a follower that takes over knows of a node the old leader saw stop).
   */
  observe(view: FormatView, now = performance.now()): void {
    for (const [name, format] of view.formats()) {
      if (format < FORMAT_VERSION) this.behind.set(name, now);
      else this.behind.delete(name);
    }
    for (const [name, at] of this.behind) if (now - at > FORGET_BEHIND_MS) this.behind.delete(name);
    if (this.behind.size > 0) this.allSince = null;
    else this.allSince ??= now;
  }

  /** While leading, every tidy: records this code's format once every node has read it for SETTLED_MS. */
  consider(view: FormatView, write: (rec: LogRecord) => Promise<void>, log: Logger, now = performance.now()): void {
    this.observe(view, now);
    if (this.allSince === null) return;
    if (this.marked >= FORMAT_VERSION || FORMAT_VERSION < FIRST_EXTENSION_FORMAT || this.writing || now - this.allSince < SETTLED_MS) return;
    this.writing = true;
    write({ t: 'format', version: FORMAT_VERSION }).then(() => {
      this.marked = Math.max(this.marked, FORMAT_VERSION);
      log.info({ format: FORMAT_VERSION }, 'every node reads this format: the cluster\'s active format recorded in the stream');
    }, (err: unknown) => {
      log.warn({ err: errorText(err) }, 'recording the cluster\'s active format failed; again later');
    }).finally(() => { this.writing = false; });
  }

  /**
   * Null when the cluster may write records that need format `needs`; otherwise why not,
   * naming the nodes that are behind (the refusal of a feature that needs them).
   */
  gate(needs: number, view: FormatView): string | null {
    if (needs <= this.marked) return null;
    const heardBehind = [...view.formats()].filter(([, f]) => f < needs).map(([name]) => name);
    const behind = [...new Set([...heardBehind, ...this.behind.keys()])].sort();
    if (needs > FORMAT_VERSION) return `needs tickd format ${needs}; this node reads ${FORMAT_VERSION}`;
    const who = behind.length > 0 ? `nodes behind: ${behind.join(', ')}` : `every node reads it; the cluster records it within ${SETTLED_MS / 1000} s of the last node's upgrade`;
    return `needs every node of the cluster at tickd format ${needs} or later; the cluster's active format is ${this.marked} (${who})`;
  }
}
