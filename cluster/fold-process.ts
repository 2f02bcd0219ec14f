// The primary's side of the compaction child role (cluster/fold-child.ts; messages in
// cluster/ipc/fold-messages.ts): where a compaction's fold runs, a child process at
// the lowest CPU priority, so that on a small machine the tick never waits for it. It is the
// Folds the logfile's compactor is given (lib/logfile/folds.ts).
//
// Why a process and not a worker thread: a worker thread shares the primary's V8 platform
// threads (its GC and JIT run there at normal priority) and its libuv pool (its file reads),
// so lowering the fold thread's own priority left most of its CPU work competing with the
// tick; on 2 cores the primary then waited up to 10 ms for a CPU while a cycle ran. The child
// is started under SCHED_IDLE through chrt(1) (util-linux) when that is installed, so every
// thread of it (main, GC, JIT, file reads) gives way to the primary at once; its threads also
// take nice 19 (the only lowering left where chrt is missing).
//
// Why not long-lived: an idle child is a whole Node process (about 45 MB) kept for a fold an
// hour. It is started for a job and retired once it has been idle for LINGER_MS (cluster
// checkpoints come in runs; a logfile's fold is one job a cycle), so an idle daemon has none.
//
// Who starts it: not the primary. Spawning a child forks the spawning process, which holds
// its event loop for a time that grows with its memory (page tables to copy; libuv waits
// until the child has exec'd, on busy cores for a CPU). Measured in bench row `compaction` (a
// primary of 127 MB RSS, jobs firing every 2 ms on two busy cores): 9.4 ms at each cycle's
// start, and the row's worst lateness rose from 8-10 ms to 15-19 ms. So the primary forks a
// spawner once, when FoldProcess is constructed at startup (before the log is replayed, and
// only where there is a log to compact) while its heap is small: a
// /bin/sh that starts each child on request and hands it the IPC channel
// (cluster/fold-spawner.ts). Should it die, the next job forks a new one (paying the fork
// once, with a warning); where there is no /bin/sh, the primary spawns each child itself
// (cluster/fold-spawner-direct.ts).
//
// Where chrt is installed but SCHED_IDLE is refused (a seccomp filter, say), chrt exits at
// once: the child is then started again without it, at nice 19 only, and the fold goes on.
//
// Orphans: the child ends as soon as its IPC channel closes (its primary is gone, or its
// spawner died and the primary closed that spawner's channel). Should it still be writing,
// it writes into a file it created with O_EXCL and holds open: a restarted primary removes
// that path at startup (the compactor does after the failed fold), and the next fold then
// creates a new file, so no orphan's bytes ever reach a file that gets renamed over the log.
import { accessSync, constants } from 'node:fs';
import { delimiter, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../lib/log.ts';
import type { CheckpointMade } from '../lib/jetstream/checkpoint-make.ts';
import type { CheckpointRunner } from '../lib/leadership/checkpoint-schedule.ts';
import type { FoldResult } from '../lib/logfile/fold.ts';
import type { FoldRunner, Folds } from '../lib/logfile/folds.ts';
import { DirectLauncher } from './fold-spawner-direct.ts';
import { SpawnerLauncher, type FoldChild, type FoldLauncher } from './fold-spawner.ts';
import type { FoldJob, FromFoldChild } from './ipc/fold-messages.ts';

// fold-child.ts in the sources, fold-child.js in an installed package (as WORKER_ENTRY in supervisor.ts).
const CHILD_ENTRY = fileURLToPath(new URL(`./fold-child${extname(import.meta.url)}`, import.meta.url));

/** The shell the spawner runs in. */
const SHELL = '/bin/sh';

/** `file` if it is executable, else null. */
function executable(file: string): string | null {
  try {
    accessSync(file, constants.X_OK);
    return file;
  } catch {
    return null;
  }
}

let chrtPath: string | null | undefined;

/** chrt(1) on PATH (or in /usr/bin, /bin for a bare init environment), looked up once. */
export function findChrt(): string | null {
  if (chrtPath !== undefined) return chrtPath;
  chrtPath = null;
  for (const dir of [...(process.env['PATH'] ?? '').split(delimiter), '/usr/bin', '/bin']) {
    if (dir !== '' && (chrtPath = executable(join(dir, 'chrt'))) !== null) break;
  }
  return chrtPath;
}

/** How long a child without a job lives on (a run of checkpoints reuses it). */
export const LINGER_MS = 30_000;

export interface FoldProcessOptions {
  /** chrt(1) to start the child under SCHED_IDLE; default: findChrt() on Linux; null: none. */
  readonly chrt?: string | null;
  /** Gets the warning when chrt fails and the child runs without SCHED_IDLE, or the spawner dies. */
  readonly log?: Logger;
  /** How long an idle child lives on; default LINGER_MS. */
  readonly lingerMs?: number;
  /** The shell of the spawner; default /bin/sh where it exists; null: the primary spawns each child itself. */
  readonly shell?: string | null;
}

interface Waiting {
  readonly job: FoldJob;
  resolve(result: FoldResult | CheckpointMade | null): void;
  reject(err: Error): void;
}

/**
 * The fold child: one job at a time (a logfile's fold, or in cluster mode the cluster's
 * checkpoint); started by start() or by the first job. The spawner is forked at construction.
 */
export class FoldProcess implements Folds {
  private child: FoldChild | null = null;
  private readonly launcher: FoldLauncher;
  private generation = 0;
  /** Whether children start under chrt (false once chrt has failed). */
  private underChrt: boolean;
  private readonly chrt: string | null;
  private readonly log: Logger | undefined;
  private waiting: Waiting | null = null;
  private closed = false;
  private readonly lingerMs: number;
  private retire: NodeJS.Timeout | null = null;

  constructor(opts: FoldProcessOptions = {}) {
    this.chrt = opts.chrt !== undefined ? opts.chrt : process.platform === 'linux' ? findChrt() : null;
    this.underChrt = this.chrt !== null;
    this.log = opts.log;
    this.lingerMs = opts.lingerMs ?? LINGER_MS;
    const shell = opts.shell !== undefined ? opts.shell : executable(SHELL);
    this.launcher = shell === null ? new DirectLauncher(CHILD_ENTRY, this.chrt) : new SpawnerLauncher(shell, CHILD_ENTRY, this.chrt, this.log);
  }

  /** Starts the child now, if there is none (a job starts it too); it is retired after lingerMs without a job. */
  start(): void {
    if (this.child === null && !this.closed) {
      this.child = this.spawn();
      this.idle();
    }
  }

  /** The child's pid, once the spawner has reported it, while it runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The spawner's pid while it runs (undefined where the primary spawns children itself). */
  get spawnerPid(): number | undefined {
    return this.launcher instanceof SpawnerLauncher ? this.launcher.pid : undefined;
  }

  readonly run: FoldRunner = (src, dst) => {
    if (this.closed || this.waiting !== null) {
      return { result: Promise.reject(new Error(this.closed ? 'the fold process is closed' : 'a fold is already running')), cancel() {} };
    }
    const job: FoldJob = { t: 'fold', src, dst };
    const result = new Promise<FoldResult>((resolve, reject) => { this.waiting = { job, resolve: resolve as Waiting['resolve'], reject }; });
    this.send(job);
    // the child may be replaced (chrt refused) before the fold ends: kill whichever runs it
    return { result, cancel: () => void this.child?.kill() };
  };

  /** Makes the cluster's checkpoint (lib/jetstream/checkpoint-make.ts) in the child. */
  readonly checkpoint: CheckpointRunner = (cluster, whole) => {
    if (this.closed || this.waiting !== null) return Promise.reject(new Error(this.closed ? 'the fold process is closed' : 'the child is busy'));
    const job: FoldJob = { t: 'checkpoint', cluster, whole };
    const result = new Promise<CheckpointMade | null>((resolve, reject) => { this.waiting = { job, resolve: resolve as Waiting['resolve'], reject }; });
    this.send(job);
    return result;
  };

  private send(job: FoldJob): void {
    this.start();
    this.busy();
    const child = this.child!;
    child.keepAlive(true); // a fold in progress keeps the primary's loop alive, an idle child does not
    child.send(job);
  }

  /** No job: the child is retired after lingerMs unless one comes. */
  private idle(): void {
    this.busy();
    this.retire = setTimeout(() => {
      this.retire = null;
      const child = this.child;
      if (child === null || this.waiting !== null) return;
      this.child = null; // before the exit, which is then no loss (lost())
      child.kill(); // idle: nothing is cut short
    }, this.lingerMs);
    this.retire.unref();
  }

  private busy(): void {
    if (this.retire !== null) clearTimeout(this.retire);
    this.retire = null;
  }

  /** Ends the child (abandoning a fold in progress) and the spawner; later folds are refused. */
  async close(): Promise<void> {
    this.closed = true;
    this.busy();
    await this.launcher.close();
  }

  private spawn(): FoldChild {
    let ready = false;
    const child: FoldChild = this.launcher.launch(++this.generation, this.underChrt, {
      message: (msg: FromFoldChild) => {
        switch (msg.t) {
          case 'ready':
            ready = true;
            return;
          case 'folded':
            child.keepAlive(false);
            this.settle()?.resolve(msg.result);
            return;
          case 'checkpointed':
            child.keepAlive(false);
            this.settle()?.resolve(msg.made);
            return;
          case 'fold-failed':
          case 'checkpoint-failed':
            child.keepAlive(false);
            this.settle()?.reject(new Error(msg.message));
            return;
          default: {
            const never: never = msg;
            this.log?.warn({ msg: never }, 'unknown message from the compaction child');
          }
        }
      },
      exit: (err, own) => this.lost(child, ready, own, err),
    });
    return child;
  }

  private settle(): Waiting | null {
    const waiting = this.waiting;
    this.waiting = null;
    if (this.child !== null && !this.closed) this.idle();
    return waiting;
  }

  private lost(child: FoldChild, ready: boolean, own: boolean, err: Error): void {
    if (this.child !== child) return;
    this.child = null;
    // Gone by itself before its first message: chrt could not set SCHED_IDLE (or could not
    // run). Go on without it rather than fail every cycle from now on.
    if (this.underChrt && !ready && own && !this.closed) {
      this.log?.warn({ err, chrt: this.chrt }, 'the compaction child could not start under chrt --idle; it runs at nice 19 only');
      this.underChrt = false;
      if (this.waiting !== null) this.send(this.waiting.job);
      return;
    }
    this.settle()?.reject(err);
  }
}
