// The journal the engine persists through (lib/engine/journal.ts `Journal`); memory mode has none.
//
// FileJournal does group commit. append() encodes the frame at once into a pending chunk
// list (so a record that cannot be stored throws right there); flush() asks for a "round":
// ONE writev of everything pending, durable when it returns with fsync_on_persist (the file
// is opened O_DSYNC; a JournalFile without that gets ONE sync() after the write). While a
// round is in flight, new appends and flushes wait and all go out together in the next round,
// so N concurrent clients share one disk flush.
//
// Invariants:
// - Rounds never overlap, and records reach the file in append order.
// - `durable` is the file length that is known written (and synced when configured); the
//   file never keeps bytes past it once a round has settled.
// - A round that fails (write or fsync) cuts the file back to `durable`, then rejects its own
//   flushes AND every flush waiting for the next round, discarding their records: the engine
//   rolls back every change not yet acknowledged, so memory equals disk again. Later
//   appends and flushes work normally. If even the cut back fails, it is retried before the
//   next write, which fails instead of writing after the non-durable bytes.
// - exclusive() gives the compactor a moment with no round in flight and none starting, in
//   which it may rename the file and switchTo() another one; flushes queue meanwhile.
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import type { Logger } from '../log.ts';
import { frameSize, writeFrame } from './codec.ts';
import { fsyncDir, LOGFILE_MODE } from './fsutil.ts';
import type { Journal, LogRecord } from '../engine/journal.ts';
import { errorText } from '../errors.ts';

/** The file operations a journal needs; tests inject failing or counting ones. */
export interface JournalFile {
  /** Appends the buffers in order; returns the bytes written (may be short). */
  writev(buffers: Buffer[]): Promise<number>;
  sync(): Promise<void>;
  truncate(length: number): Promise<void>;
  close(): Promise<void>;
  /** Every write is durable once it returns (opened with O_DSYNC): sync() is not needed. */
  readonly syncsOnWrite?: boolean;
}
export interface OpenedJournalFile {
  readonly file: JournalFile;
  /** Length of the file when opened. */
  readonly size: number;
}
export type OpenJournalFile = (path: string) => Promise<OpenedJournalFile>;

const APPEND = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT;

/**
 * Opens (creating it if needed) a file for appending, through node:fs. With `dsync` the file
 * is opened O_DSYNC: each write returns once its data is on disk, as write + fdatasync would,
 * but in one call to the thread pool instead of two, so a commit round is shorter and the
 * daemon commits more of them per second (bench/: durable row).
 */
export function appendFileOpener(dsync: boolean): OpenJournalFile {
  const flags = dsync ? APPEND | constants.O_DSYNC : APPEND;
  return async (path) => {
    const handle = await open(path, flags, LOGFILE_MODE);
    try {
      const { size } = await handle.stat();
      const file: JournalFile = {
        writev: async (buffers) => (await handle.writev(buffers)).bytesWritten,
        sync: () => handle.sync(),
        truncate: (length) => handle.truncate(length),
        close: () => handle.close(),
        syncsOnWrite: dsync,
      };
      return { file, size };
    } catch (err) {
      await handle.close();
      throw err;
    }
  };
}

export class JournalClosedError extends Error {
  override readonly name = 'JournalClosedError';
  constructor() {
    super('the logfile journal is closed');
  }
}

export class JournalWriteError extends Error {
  override readonly name = 'JournalWriteError';
  constructor(path: string, cause: unknown) {
    super(`writing ${path} failed: ${errorText(cause)}`, { cause });
  }
}

const CHUNK_BYTES = 64 * 1024;
const EMPTY = Buffer.alloc(0);

/** Encoded frames waiting for a round, packed into few large buffers. */
class PendingFrames {
  private sealed: Buffer[] = [];
  private chunk: Buffer = EMPTY;
  private used = 0;
  bytes = 0;

  count = 0;

  add(rec: LogRecord): void {
    const size = frameSize(rec); // throws before anything changes
    if (this.used + size > this.chunk.length) {
      if (this.used > 0) this.sealed.push(this.chunk.subarray(0, this.used));
      this.chunk = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, size));
      this.used = 0;
    }
    writeFrame(rec, size, this.chunk, this.used);
    this.used += size;
    this.bytes += size;
    this.count++;
  }

  take(): Buffer[] {
    const out = this.sealed;
    if (this.used > 0) {
      out.push(this.chunk.subarray(0, this.used));
      this.chunk = this.chunk.subarray(this.used); // the rest of the chunk stays usable
      this.used = 0;
    }
    this.sealed = [];
    this.bytes = 0;
    this.count = 0;
    return out;
  }
}

async function writeAll(file: JournalFile, buffers: Buffer[], total: number): Promise<void> {
  let left = total;
  let list = buffers;
  while (left > 0) {
    const n = await file.writev(list);
    if (!(n > 0)) throw new Error('write made no progress');
    left -= n;
    if (left > 0) list = dropWritten(list, n);
  }
}

function dropWritten(list: Buffer[], written: number): Buffer[] {
  const out: Buffer[] = [];
  let skip = written;
  for (const b of list) {
    if (skip >= b.length) { skip -= b.length; continue; }
    out.push(skip > 0 ? b.subarray(skip) : b);
    skip = 0;
  }
  return out;
}

interface Waiter {
  resolve(): void;
  reject(err: Error): void;
}

export interface FileJournalOptions {
  readonly path: string;
  readonly fsync: boolean;
  readonly log: Logger;
  /** Defaults to appendFileOpener(fsync): O_DSYNC when fsync is on. */
  readonly openFile?: OpenJournalFile;
}

export class FileJournal implements Journal {
  readonly path: string;
  private readonly fsync: boolean;
  private readonly log: Logger;
  private readonly opener: OpenJournalFile;
  private file: JournalFile;
  private durable: number;
  private readonly pending = new PendingFrames();
  private waiting: Waiter[] = []; // flushes whose records are in `pending`
  private inflight: Waiter[] | null = null; // flushes whose records the current round writes
  private idleWaiters: (() => void)[] = [];
  private holds = 0;
  private exclusiveTail: Promise<unknown> = Promise.resolve();
  private needsRepair = false;
  private kickScheduled = false;
  private state: 'open' | 'closing' | 'closed' = 'open';
  private closing: Promise<void> | null = null;
  /** Rounds written so far (each = one write, durable with fsync_on_persist). */
  rounds = 0;
  /** Records those rounds wrote. */
  records = 0;

  private constructor(opts: FileJournalOptions, opened: OpenedJournalFile) {
    this.path = opts.path;
    this.fsync = opts.fsync;
    this.log = opts.log;
    this.opener = opts.openFile ?? appendFileOpener(opts.fsync);
    this.file = opened.file;
    this.durable = opened.size;
  }

  /** Opens `path` for appending; everything already in it counts as durable. */
  static async open(opts: FileJournalOptions): Promise<FileJournal> {
    const opened = await (opts.openFile ?? appendFileOpener(opts.fsync))(opts.path);
    // A file we may just have created is only trusted once its directory entry is synced.
    if (opened.size === 0 && opts.openFile === undefined) await fsyncDir(opts.path);
    return new FileJournal(opts, opened);
  }

  /** Bytes of the file known to be durable. */
  get durableBytes(): number {
    return this.durable;
  }

  append(rec: LogRecord): void {
    if (this.state === 'closed') throw new JournalClosedError();
    this.pending.add(rec);
  }

  flush(): Promise<void> {
    if (this.state === 'closed') return Promise.reject(new JournalClosedError());
    return new Promise<void>((resolve, reject) => {
      const waiter = { resolve, reject };
      if (this.pending.bytes > 0) {
        this.waiting.push(waiter);
        this.kick();
      } else if (this.inflight !== null) {
        this.inflight.push(waiter); // what was appended before is in the round in flight
      } else {
        resolve();
      }
    });
  }

  /** Writes what is pending, waits for the last round, closes the file. Idempotent. */
  close(): Promise<void> {
    this.closing ??= this.closeOnce();
    return this.closing;
  }

  private async closeOnce(): Promise<void> {
    this.state = 'closing';
    await this.exclusiveTail;
    while (this.pending.bytes > 0 || this.inflight !== null) {
      await this.flush().catch(() => {}); // the failure already reached the flush callers
    }
    this.state = 'closed';
    await this.file.close();
    // Group commit at a glance: records per round is how many writes shared each disk flush.
    this.log.info({ path: this.path, rounds: this.rounds, records: this.records, fsync: this.fsync }, 'logfile closed');
  }

  /**
   * Runs fn with no round in flight and none starting until it settles; the file then holds
   * exactly `durableBytes`. Calls are serialized. For the compactor's renames and switchTo().
   */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = async (): Promise<T> => {
      if (this.state === 'closed') throw new JournalClosedError();
      this.holds++;
      try {
        await this.whenIdle();
        if (this.needsRepair) await this.repair();
        return await fn();
      } finally {
        this.holds--;
        this.kick();
      }
    };
    const result = this.exclusiveTail.then(run, run);
    this.exclusiveTail = result.catch(() => {});
    return result;
  }

  /** Opens another file the way this journal opens its own (for switchTo()). */
  openFile(path: string): Promise<OpenedJournalFile> {
    return this.opener(path);
  }

  /** Inside exclusive(): appends go to `opened` from now on; the old file is closed. */
  async switchTo(opened: OpenedJournalFile): Promise<void> {
    if (this.holds === 0 || this.inflight !== null) throw new Error('switchTo() outside exclusive()');
    const old = this.file;
    this.file = opened.file;
    this.durable = opened.size;
    this.needsRepair = false;
    await old.close().catch((err: unknown) => this.log.warn({ err }, 'closing the previous logfile descriptor failed'));
  }

  private kick(): void {
    if (this.inflight !== null || this.holds > 0 || this.waiting.length === 0 || this.kickScheduled) return;
    // Start on the next check phase rather than now: flushes arriving in the same event-loop
    // turn (one per IPC batch, per client reply...) then share the round instead of the
    // first one going out alone and the rest waiting a whole write + fsync behind it.
    this.kickScheduled = true;
    setImmediate(() => {
      this.kickScheduled = false;
      if (this.inflight === null && this.holds === 0 && this.waiting.length > 0) void this.round();
    });
  }

  private async round(): Promise<void> {
    const bytes = this.pending.bytes;
    const count = this.pending.count;
    const buffers = this.pending.take();
    const waiters = this.waiting;
    this.waiting = [];
    this.inflight = waiters;
    let failure: Error | null = null;
    try {
      if (this.needsRepair) await this.repair();
      await writeAll(this.file, buffers, bytes);
      if (this.fsync && this.file.syncsOnWrite !== true) await this.file.sync();
      this.durable += bytes;
      this.records += count;
    } catch (err) {
      failure = err instanceof JournalWriteError ? err : new JournalWriteError(this.path, err);
      await this.repair().catch(() => {}); // logged inside; retried before the next write
    }
    this.rounds++;
    this.inflight = null;
    if (failure === null) {
      for (const w of waiters) w.resolve();
    } else {
      // Everything appended meanwhile is discarded with it: the engine rolls it all back.
      const later = this.waiting;
      this.waiting = [];
      this.pending.take();
      for (const w of waiters) w.reject(failure);
      for (const w of later) w.reject(failure);
    }
    const idle = this.idleWaiters;
    this.idleWaiters = [];
    for (const wake of idle) wake();
    // Flushes that queued behind this round go out now, not a setImmediate later: the disk
    // works on them while this turn answers the round just finished (its waiters resume in
    // the microtasks after this). Batching is not lost: they all queued during the round.
    if (this.holds === 0 && this.waiting.length > 0) void this.round();
    else this.kick();
  }

  /** Cuts the file back to its durable length. */
  private async repair(): Promise<void> {
    try {
      await this.file.truncate(this.durable);
      this.needsRepair = false;
    } catch (err) {
      this.needsRepair = true;
      this.log.error({ err, path: this.path, length: this.durable }, 'cutting the logfile back to its durable length failed');
      throw new JournalWriteError(this.path, err);
    }
  }

  private whenIdle(): Promise<void> {
    if (this.inflight === null) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}
