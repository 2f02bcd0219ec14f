// The compaction children's spawner: a /bin/sh the primary forks once, when its heap is
// still small, and that starts each fold child on request, so that the primary never forks
// itself again for them (why that matters: cluster/fold-process.ts).
//
// The primary spawns the shell with an IPC channel on fd 3 (NODE_CHANNEL_FD in its
// environment). The shell never reads it; the children it starts inherit fd 3 and the
// environment, so each is a Node process on that same channel. Requests come on its stdin,
// one a line: `spawn GEN idle` (under `chrt --idle 0`) or `spawn GEN plain`. For each, a
// subshell starts `node --expose-gc fold-child GEN` and reports `pid GEN PID`, then, once it
// has waited for it, `exit GEN STATUS` (128 + N for signal N) on the shell's stdout. The
// primary kills a child by its pid.
//
// One channel for successive children: a job a child never read, or an answer a dead child
// wrote, is still in it for the next. Messages carry the generation (ipc/fold-messages.ts),
// each side drops the others', and a child is started only once the one before it has been
// reported gone, so that one child at a time reads the channel (a dying child could
// otherwise read, and drop, its successor's job). A Node child's exit closes its descriptor
// of the channel and does not shut it down (test/integration/fold-spawner.test.ts), so the
// primary's end stays open for the next. When the primary dies, the shell reads EOF and
// exits, and the child reads EOF on the channel and ends itself.
//
// The shell ignores SIGINT, SIGQUIT and SIGHUP (a terminal's, sent to the whole process
// group) and SIGTERM (systemd's stop sends it to every process of the unit): the primary
// decides what they mean, and the shell ends with it (EOF on its stdin). The child gets the
// default dispositions.
// Should the shell die anyway, its children are lost (their channel is closed, so they end)
// and the next child is started by a new shell, forked then.
//
// The seam FoldProcess (cluster/fold-process.ts) starts children through is here too (a
// FoldLauncher: a child of a given generation, with or without chrt, its messages and its
// end); where there is no /bin/sh, cluster/fold-spawner-direct.ts spawns each child itself.
import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { constants as os } from 'node:os';
import type { Logger } from '../lib/log.ts';
import type { FoldJob, FromFoldChild } from './ipc/fold-messages.ts';

/** What a launched child reports, once each thing happens (never during launch()). */
export interface FoldChildEvents {
  /** A message of this child's generation. */
  message(msg: FromFoldChild): void;
  /** It is gone. `own`: it exited by itself (a status), not by a signal or with its spawner. */
  exit(err: Error, own: boolean): void;
}

/** One fold child. */
export interface FoldChild {
  readonly gen: number;
  /** Its pid, once known (the spawner reports it a moment after launch()). */
  readonly pid: number | undefined;
  /** Sends a job, addressed to this generation. */
  send(job: FoldJob): void;
  /** SIGKILL, now or as soon as it has a pid; a child not started yet never starts. */
  kill(): void;
  /** Whether it holds this process's event loop open (while a job runs). */
  keepAlive(on: boolean): void;
  /** Resolves once it is gone (after its exit event). */
  readonly exited: Promise<void>;
}

export interface FoldLauncher {
  /** Starts child `gen`, under `chrt --idle 0` when `underChrt` (and the launcher has a chrt). */
  launch(gen: number, underChrt: boolean, events: FoldChildEvents): FoldChild;
  /** Kills every child, waits for their ends, and ends what the launcher itself runs. */
  close(): Promise<void>;
}

/** The error a child's end settles its job with. */
export function exitError(code: number | null, signal: string | null): Error {
  return new Error(`the compaction child exited (${signal ?? `code ${code}`}) without a result`);
}

/** Whether `proc` (its process handle and its IPC channel) holds this process's event loop open. */
export function holdLoop(proc: ChildProcess, on: boolean): void {
  if (on) {
    proc.ref();
    proc.channel?.ref();
  } else {
    proc.unref();
    proc.channel?.unref();
  }
}

/** `$0` of the spawner: how it shows in ps (its script must not name the child's entry). */
export const SPAWNER_NAME = 'tickd-fold-spawner';

const SCRIPT = `node=$FOLD_SPAWNER_NODE chrt=$FOLD_SPAWNER_CHRT entry=$FOLD_SPAWNER_ENTRY
unset FOLD_SPAWNER_NODE FOLD_SPAWNER_CHRT FOLD_SPAWNER_ENTRY
trap '' HUP INT QUIT TERM
while read -r verb gen mode; do
  [ "$verb" = spawn ] || continue
  (
    exec 4>&2 2>/dev/null # the waiting shell's own notes ("Killed") stay out of the daemon's stderr
    if [ "$mode" = idle ]; then set -- "$chrt" --idle 0; else set --; fi
    (trap - HUP INT QUIT TERM; exec "$@" "$node" --expose-gc "$entry" "$gen" 2>&4 4>&-) </dev/null >/dev/null &
    pid=$!
    echo "pid $gen $pid"
    wait "$pid"
    echo "exit $gen $?"
  ) &
done
`;

const SIGNALS = new Map(Object.entries(os.signals).map(([name, n]) => [n, name]));

/** A child started through a spawner. */
class SpawnedChild implements FoldChild {
  readonly gen: number;
  readonly underChrt: boolean;
  pid: number | undefined;
  wantsLoop = false;
  readonly exited: Promise<void>;
  /** The spawner that started it; null until then. */
  host: Spawner | null = null;
  private readonly events: FoldChildEvents;
  private readonly refresh: () => void;
  /** Jobs sent before it was started (its predecessor was still dying). */
  private pending: FoldJob[] = [];
  private killed = false;
  private done = false;
  private resolveExited!: () => void;

  constructor(gen: number, underChrt: boolean, events: FoldChildEvents, refresh: () => void) {
    this.gen = gen;
    this.underChrt = underChrt;
    this.events = events;
    this.refresh = refresh;
    this.exited = new Promise((resolve) => { this.resolveExited = resolve; });
  }

  /** Neither killed nor ended: it may still be started. */
  get startable(): boolean {
    return !this.killed && !this.done;
  }

  send(job: FoldJob): void {
    if (this.host === null) this.pending.push(job);
    else this.host.send({ ...job, gen: this.gen });
  }

  kill(): void {
    this.killed = true;
    if (this.done) return;
    if (this.host === null) process.nextTick(() => this.end(exitError(null, 'SIGKILL'), false)); // never to start
    else if (this.pid !== undefined) signal(this.pid);
  }

  keepAlive(on: boolean): void {
    this.wantsLoop = on;
    this.refresh();
  }

  /** Its spawner started it: what was sent meanwhile goes out now. */
  started(host: Spawner): void {
    this.host = host;
    for (const job of this.pending) host.send({ ...job, gen: this.gen });
    this.pending = [];
  }

  hasPid(pid: number): void {
    this.pid = pid;
    if (this.killed) signal(pid);
  }

  end(err: Error, own: boolean): void {
    if (this.done) return;
    this.done = true;
    this.wantsLoop = false; // a gone child holds nothing open, whatever job it had
    this.events.exit(err, own);
    this.resolveExited();
    this.refresh();
  }

  message(msg: FromFoldChild): void {
    if (!this.done) this.events.message(msg);
  }
}

function signal(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone already: its exit line is on its way
  }
}

/** One spawner process and the children it started. */
class Spawner {
  readonly proc: ChildProcess;
  private readonly children = new Map<number, SpawnedChild>();
  private gone = false;
  private ending = false;

  constructor(shell: string, entry: string, chrt: string | null, onGone: (spawner: Spawner, why: string) => void) {
    this.proc = spawn(shell, ['-c', SCRIPT, SPAWNER_NAME], {
      stdio: ['pipe', 'pipe', 'inherit', 'ipc'],
      env: { ...process.env, FOLD_SPAWNER_NODE: process.execPath, FOLD_SPAWNER_CHRT: chrt ?? '', FOLD_SPAWNER_ENTRY: entry },
    });
    const proc = this.proc;
    proc.stdin!.on('error', () => {}); // EPIPE: the shell is gone, which 'exit' reports
    let partial = '';
    proc.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop()!;
      for (const line of lines) this.line(line);
    });
    proc.on('message', (msg: FromFoldChild) => this.children.get(msg.gen)?.message(msg)); // another generation's: stale
    const lost = (why: string): void => {
      if (this.gone) return;
      this.gone = true;
      if (proc.connected) proc.disconnect(); // a child still running reads EOF and ends itself
      proc.stdin!.destroy();
      proc.stdout!.destroy();
      const err = new Error(`the compaction spawner ended (${why}); its child is lost`);
      for (const child of this.children.values()) child.end(err, false);
      this.children.clear();
      if (!this.ending) onGone(this, why);
    };
    proc.on('error', (err) => { if (proc.pid === undefined) lost(err.message); }); // it could not start
    proc.on('exit', (code, sig) => lost(sig ?? `code ${code}`));
    // The shell holds the channel's child end while it lives, so this is not expected; were
    // it to happen, no child could answer on it: end the shell, and the next job forks anew.
    proc.on('disconnect', () => { if (!this.gone && !this.ending) proc.kill('SIGKILL'); });
    this.keepLoop(false);
  }

  get alive(): boolean {
    return !this.gone;
  }

  start(child: SpawnedChild): void {
    this.children.set(child.gen, child);
    this.proc.stdin!.write(`spawn ${child.gen} ${child.underChrt ? 'idle' : 'plain'}\n`);
    child.started(this); // its jobs wait in the channel until it reads them
  }

  send(msg: FoldJob & { gen: number }): void {
    if (!this.gone) this.proc.send(msg, undefined, undefined, () => {}); // a lost spawner reports its exit
  }

  keepLoop(on: boolean): void {
    holdLoop(this.proc, on);
    for (const pipe of [this.proc.stdin, this.proc.stdout] as (Socket | null)[]) {
      if (on) pipe?.ref();
      else pipe?.unref();
    }
  }

  /** Ends the shell (its children are gone already) and waits for its exit. */
  async end(): Promise<void> {
    this.ending = true;
    if (this.gone) return;
    this.keepLoop(true);
    const exited = new Promise((resolve) => this.proc.once('exit', resolve));
    this.proc.stdin!.end(); // EOF: its loop ends
    await exited;
  }

  private line(line: string): void {
    const [what, gen, value] = line.split(' ');
    const child = this.children.get(Number(gen));
    if (child === undefined) return;
    if (what === 'pid') {
      child.hasPid(Number(value));
    } else if (what === 'exit') {
      this.children.delete(child.gen);
      const status = Number(value);
      const sig = status > 128 ? (SIGNALS.get(status - 128) ?? `signal ${status - 128}`) : null;
      child.end(exitError(sig === null ? status : null, sig), sig === null);
    }
  }
}

/**
 * Starts children through a spawner forked at construction (and again, with a warning, at
 * the first launch after it died), one child at a time.
 */
export class SpawnerLauncher implements FoldLauncher {
  private readonly shell: string;
  private readonly entry: string;
  private readonly chrt: string | null;
  private readonly log: Logger | undefined;
  private spawner: Spawner | null;
  private readonly live = new Set<SpawnedChild>();
  /** The last child launched has exited: the next one starts after that. */
  private previous: Promise<void> = Promise.resolve();
  private closing: Promise<void> | null = null;

  constructor(shell: string, entry: string, chrt: string | null, log: Logger | undefined) {
    this.shell = shell;
    this.entry = entry;
    this.chrt = chrt;
    this.log = log;
    this.spawner = this.fork();
  }

  /** The spawner's pid, while it runs. */
  get pid(): number | undefined {
    return this.spawner?.alive === true ? this.spawner.proc.pid : undefined;
  }

  launch(gen: number, underChrt: boolean, events: FoldChildEvents): FoldChild {
    const child = new SpawnedChild(gen, underChrt && this.chrt !== null, events, () => this.refresh());
    this.live.add(child);
    void child.exited.then(() => this.live.delete(child));
    const before = this.previous;
    this.previous = child.exited;
    void before.then(() => {
      if (!child.startable) return; // killed while it waited
      if (this.spawner === null || !this.spawner.alive) this.spawner = this.fork();
      this.spawner.start(child);
      this.refresh();
    });
    return child;
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      const live = [...this.live];
      for (const child of live) {
        child.keepAlive(true); // else this process may end before the exit is seen
        child.kill();
      }
      await Promise.all(live.map((child) => child.exited));
      await this.spawner?.end();
    })();
    return this.closing;
  }

  private fork(): Spawner {
    return new Spawner(this.shell, this.entry, this.chrt, (gone, why) => {
      if (this.spawner === gone) this.spawner = null;
      this.log?.warn({ why }, 'the compaction spawner ended; the next compaction child is started by a new one, forked then');
    });
  }

  /** The spawner holds the event loop open while some child has a job (or waits to start for one). */
  private refresh(): void {
    this.spawner?.keepLoop([...this.live].some((child) => child.wantsLoop));
  }
}
