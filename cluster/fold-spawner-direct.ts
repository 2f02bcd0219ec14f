// Where there is no /bin/sh for the spawner (cluster/fold-spawner.ts): the primary spawns
// each compaction child itself, forking itself every time (why that costs:
// cluster/fold-process.ts). The same seam, FoldLauncher; each child has a channel of its own.
import { spawn, type ChildProcess } from 'node:child_process';
import { exitError, holdLoop, type FoldChild, type FoldChildEvents, type FoldLauncher } from './fold-spawner.ts';
import type { FoldJob, FromFoldChild } from './ipc/fold-messages.ts';

/** The command line of fold child `gen`: node, under `chrt --idle 0` when `chrt` is given. */
function foldCommand(entry: string, chrt: string | null, gen: number): { file: string; args: string[] } {
  // --expose-gc: the child collects after each fold, so that it is small while it lingers.
  const node = [process.execPath, '--expose-gc', entry, String(gen)];
  return chrt === null ? { file: node[0]!, args: node.slice(1) } : { file: chrt, args: ['--idle', '0', ...node] };
}

/** A child spawned by the primary itself: every spawn forks the primary (see fold-process.ts). */
class DirectChild implements FoldChild {
  readonly gen: number;
  readonly exited: Promise<void>;
  private readonly proc: ChildProcess;

  constructor(gen: number, file: string, args: string[], events: FoldChildEvents) {
    this.gen = gen;
    const proc = spawn(file, args, { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    this.proc = proc;
    proc.on('message', (msg: FromFoldChild) => {
      if (msg.gen === gen) events.message(msg);
    });
    this.exited = new Promise((resolve) => {
      let done = false;
      const end = (err: Error, own: boolean): void => {
        if (done) return;
        done = true;
        events.exit(err, own);
        resolve();
      };
      proc.on('error', (err) => end(err, proc.signalCode === null));
      proc.on('exit', (code, signal) => end(exitError(code, signal), signal === null));
    });
    holdLoop(proc, false);
  }

  get pid(): number | undefined {
    return this.proc.pid;
  }

  send(job: FoldJob): void {
    this.proc.send({ ...job, gen: this.gen }, undefined, undefined, () => {}); // a lost child reports its exit
  }

  kill(): void {
    this.proc.kill('SIGKILL');
  }

  keepAlive(on: boolean): void {
    holdLoop(this.proc, on);
  }
}

/** Spawns each child from this process (where there is no /bin/sh for a spawner). */
export class DirectLauncher implements FoldLauncher {
  private readonly entry: string;
  private readonly chrt: string | null;
  private readonly live = new Set<DirectChild>();

  constructor(entry: string, chrt: string | null) {
    this.entry = entry;
    this.chrt = chrt;
  }

  launch(gen: number, underChrt: boolean, events: FoldChildEvents): FoldChild {
    const { file, args } = foldCommand(this.entry, underChrt ? this.chrt : null, gen);
    const child = new DirectChild(gen, file, args, events);
    this.live.add(child);
    void child.exited.then(() => this.live.delete(child));
    return child;
  }

  async close(): Promise<void> {
    const live = [...this.live];
    for (const child of live) {
      child.keepAlive(true); // else this process may end before the exit is seen
      child.kill();
    }
    await Promise.all(live.map((child) => child.exited));
  }
}
