// Background compaction of the logfile (tickd.toml(5) [database]; doc/logfile-format.md).
//
// Files: L = `<path>` (the journal's log), C = `<path>.to_compress` (the history being
// folded), T = `<path>.compacting` (the compacted output being built).
//
// One cycle:
//  1. Rotate (skipped when C already exists: a leftover is folded instead). With the journal
//     held (no round in flight): rename L -> C, open a fresh L, switch the journal to it,
//     fsync the directory. Only then may new appends be acknowledged.
//  2. Fold C into T in a child process at the lowest CPU priority (cluster/fold-process.ts): last
//     record per (kind, identifier); removals drop the entry; a job and a rule with the same
//     identifier are distinct. T is fsynced.
//  3. Append L's durable bytes to T (in passes, without holding the journal), then hold the
//     journal for the short final swap: append the rest of L, fsync T, open T for appending,
//     rename T -> L, switch the journal to the opened T, fsync the directory. Release.
//  4. Unlink C, fsync the directory.
// Result: L = compacted(C) ‖ everything appended since the rotation (doc/logfile-format.md).
// A cycle finds nothing to do (and touches no file) when L is empty, or when nothing was
// appended since a cycle left L as exactly its fold's output: an idle daemon does not
// rewrite its whole state every interval.
// The primary only does renames, async copies and fsyncs; the fold's CPU work and its memory
// live in the child, so the event loop and the scheduler tick never wait on it.
//
// Crash-point analysis (startup replays C if present, then L, and deletes T; every record is
// full-state, so a record replayed twice is harmless; "acknowledged" = its flush resolved):
//  - before 1, or 1 not yet durable: L (or C under L's old name) holds everything; nothing
//    was acknowledged during 1 because the journal is held until the directory is synced.
//  - after 1 (L fresh, maybe empty or missing): replay C then L = the old history followed by
//    every acknowledged append since. A missing L is an empty one.
//  - during 2 or 3 before the rename: T is incomplete or unreferenced and is deleted; C + L
//    still hold everything.
//  - after the rename of 3: L = compacted(C) ‖ copy of the fresh log (‖ later appends, which
//    were only acknowledged after the directory fsync). Replaying C then L gives the state of
//    C, then C's last values again (no-ops), then the appends: the acknowledged state. Had the
//    rename not reached the disk, the old fresh L is back and C + L is still complete.
//  - after 4: only L, which holds everything. If the unlink was lost, as above.
// A failed cycle is logged and retried at the next interval; C then is a leftover and is
// folded without a new rotation, so no history is ever left behind. Its partial T is removed
// at once: on a nearly full disk it would otherwise hold the space the journal needs.
import { open, rename, rm } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { MAX_TIMER_MS } from '../clock.ts';
import type { CompressionState } from '../domain/stat.ts';
import type { Logger } from '../log.ts';
import type { FoldResult } from './fold.ts';
import type { Folds } from './folds.ts';
import { compactingPath, exists, fsyncDir, toCompressPath, writeFully } from './fsutil.ts';
import type { FileJournal } from './writer.ts';

export type CompactionOutcome = 'success' | 'failure' | 'skipped';

export interface CompactorOptions {
  readonly path: string;
  readonly journal: FileJournal;
  /** Seconds between cycles; 0 disables the timer (a leftover is still folded at start()). */
  readonly intervalSec: number;
  readonly log: Logger;
  /** Where folds run (the primary's compaction child: cluster/fold-process.ts); closed by stop(). */
  readonly folds: Folds;
  /** Called after every cycle that ran (telemetry). */
  readonly onCycle?: (outcome: 'success' | 'failure') => void;
}

const COPY_CHUNK_BYTES = 1024 * 1024;
const SWAP_CATCH_UP_BYTES = 256 * 1024;

class CompactionStopped extends Error {}

export class Compactor {
  /** For STAT `compression`. */
  state: CompressionState = 'idle';
  /** Completed successful cycles (telemetry `persistence.compactions`). */
  compactions = 0;
  private readonly path: string;
  private readonly journal: FileJournal;
  private readonly intervalMs: number;
  private readonly log: Logger;
  private readonly folds: Folds;
  private readonly onCycle: ((outcome: 'success' | 'failure') => void) | undefined;
  private running: Promise<CompactionOutcome> | null = null;
  private cancelFold: (() => void) | null = null;
  private timer: NodeJS.Timeout | null = null;
  private started = false;
  private stopped = false;
  /**
   * The log's length when it last held exactly a fold's output (nothing appended during that
   * cycle), null when unknown; while it still has that length, a cycle would rewrite the same
   * file: skipped. An empty log is the fold of nothing.
   */
  private foldedLength: number | null = 0;

  constructor(opts: CompactorOptions) {
    this.path = opts.path;
    this.journal = opts.journal;
    this.intervalMs = opts.intervalSec * 1000;
    this.log = opts.log;
    this.folds = opts.folds;
    this.onCycle = opts.onCycle;
  }

  /** Folds a leftover `.to_compress` first (if any), then starts the periodic timer. */
  start(): void {
    if (this.started) return;
    this.started = true;
    void exists(toCompressPath(this.path))
      .then(async (leftover) => {
        if (leftover) {
          this.log.info({ path: toCompressPath(this.path) }, 'folding the leftover of an interrupted compaction');
          await this.runOnce();
        }
      })
      .catch((err: unknown) => this.log.error({ err }, 'checking for a leftover compaction failed'))
      .finally(() => this.arm(this.intervalMs));
  }

  /** One cycle now; 'skipped' if one is already running (or the compactor is stopped). */
  runOnce(): Promise<CompactionOutcome> {
    if (this.running !== null || this.stopped) return Promise.resolve('skipped');
    this.state = 'running';
    const started = performance.now();
    this.running = this.cycle().then(
      (folded): CompactionOutcome => {
        this.state = 'success';
        if (folded.inputRecords !== undefined) {
          this.compactions++;
          this.log.info({ ...folded, ms: Math.round(performance.now() - started) }, 'logfile compacted');
        }
        return 'success';
      },
      (err: unknown): CompactionOutcome => {
        this.state = 'failure';
        if (err instanceof CompactionStopped) this.log.info('compaction stopped; its leftover is folded at the next start');
        else this.log.error({ err, path: this.path }, 'logfile compaction failed; it is retried at the next interval');
        return 'failure';
      },
    ).then((outcome) => {
      this.running = null;
      this.onCycle?.(outcome === 'success' ? 'success' : 'failure');
      return outcome;
    });
    return this.running;
  }

  /** Stops the timer, abandons a running fold and closes the folds; resolves once no cycle runs. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.cancelFold?.();
    await this.running;
    await this.folds.close();
  }

  private arm(remainingMs: number): void {
    if (this.stopped || this.intervalMs <= 0) return;
    const step = Math.min(remainingMs, MAX_TIMER_MS);
    this.timer = setTimeout(() => {
      if (remainingMs > step) {
        this.arm(remainingMs - step);
        return;
      }
      void this.runOnce();
      this.arm(this.intervalMs);
    }, step);
    this.timer.unref();
  }

  private checkStopped(): void {
    if (this.stopped) throw new CompactionStopped();
  }

  private async cycle(): Promise<Partial<FoldResult>> {
    const { path, journal } = this;
    const leftover = toCompressPath(path);
    const output = compactingPath(path);
    if (!(await exists(leftover))) {
      if (journal.durableBytes === this.foldedLength) {
        this.log.debug({ path, bytes: this.foldedLength }, 'logfile already compact; cycle skipped');
        return {};
      }
      await journal.exclusive(async () => {
        await rename(path, leftover);
        let fresh;
        try {
          fresh = await journal.openFile(path);
        } catch (err) {
          await rename(leftover, path); // the journal still writes to this inode: put it back
          throw err;
        }
        await journal.switchTo(fresh);
        await fsyncDir(path);
      });
    }
    this.checkStopped();
    let folded: FoldResult;
    try {
      folded = await this.foldAndSwap(leftover, output);
    } catch (err) {
      // A partial output must not stay behind until the next cycle: on a nearly full disk
      // it holds the very space the journal needs, and every write would fail meanwhile.
      // (After the rename of step 3 the name is gone and this does nothing.)
      await rm(output, { force: true }).catch((e: unknown) => this.log.warn({ err: e, path: output }, 'removing the partial compaction output failed'));
      throw err;
    }
    await rm(leftover, { force: true });
    await fsyncDir(path);
    return folded;
  }

  /** Steps 2 and 3: fold `leftover` into `output`, append the log's tail, swap it in. */
  private async foldAndSwap(leftover: string, output: string): Promise<FoldResult> {
    const { path, journal } = this;
    const run = this.folds.run(leftover, output);
    this.cancelFold = run.cancel;
    let folded: FoldResult;
    try {
      folded = await run.result;
    } catch (err) {
      this.checkStopped();
      throw err;
    } finally {
      this.cancelFold = null;
    }
    this.checkStopped();

    const out = await open(output, 'a');
    // The log's inode stays put until our own rename below: one descriptor serves every pass.
    let source: FileHandle | null = null;
    try {
      const from = await open(path, 'r');
      source = from;
      // Catch up without holding the journal until little is left, so that the pause that
      // follows (copy the rest, sync, rename) stays short even under heavy writing.
      let copied = 0;
      for (let pass = 0; pass < 5 && journal.durableBytes - copied > SWAP_CATCH_UP_BYTES; pass++) {
        copied = await copyRange(from, path, out, copied, journal.durableBytes);
        await out.sync();
      }
      await journal.exclusive(async () => {
        copied = await copyRange(from, path, out, copied, journal.durableBytes);
        await out.sync();
        const swapped = await journal.openFile(output); // its descriptor follows the rename
        try {
          await rename(output, path);
        } catch (err) {
          await swapped.file.close();
          throw err;
        }
        await journal.switchTo(swapped);
        await fsyncDir(path);
        this.foldedLength = copied === 0 ? journal.durableBytes : null;
      });
    } finally {
      await source?.close();
      await out.close();
    }
    return folded;
  }
}

/** Appends bytes [from, to) of `src` (the file at `srcPath`) to `dst`; returns `to`. */
async function copyRange(src: FileHandle, srcPath: string, dst: FileHandle, from: number, to: number): Promise<number> {
  if (to <= from) return from;
  const buf = Buffer.allocUnsafe(Math.min(COPY_CHUNK_BYTES, to - from));
  for (let at = from; at < to;) {
    const { bytesRead } = await src.read(buf, 0, Math.min(buf.length, to - at), at);
    if (bytesRead === 0) throw new Error(`${srcPath} is shorter than its durable length ${to}`);
    await writeFully(dst, buf.subarray(0, bytesRead));
    at += bytesRead;
  }
  return to;
}
