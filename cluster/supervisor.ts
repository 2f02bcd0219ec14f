// Forks and keeps the connection workers, and is the primary's one dispatch of their messages
// (cluster/ipc/messages.ts): 'listening' / 'listen-failed' settle the worker's start, 'batch'
// goes to the engine through onBatch with its replies coalesced per turn back to that worker
// (WorkerLink, cluster/ipc/channel.ts), 'connections' to onConnections. Startup: every worker
// must report 'listening' (TCP first, then HTTP) or the daemon does not start. Afterwards a
// worker that dies is replaced after a backoff (respawn-backoff.ts). Once drain() or killAll()
// was called no worker is forked again, and drain() reaches workers still starting too.
// announce() tells every worker the daemon's phase for GET /ready ('ready', then 'stopping'),
// and so is told every worker forked later, right after its 'init'.
// Every send to a worker carries a callback and every worker has an 'error' listener: a
// worker that vanished costs a log line, never the primary.
import cluster, { type Worker } from 'node:cluster';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command, Reply } from '../lib/domain/command.ts';
import type { Logger } from '../lib/log.ts';
import { decodeBatch } from './ipc/batch-codec.ts';
import { WorkerLink } from './ipc/channel.ts';
import { RespawnBackoff } from './respawn-backoff.ts';
import type { ToPrimary, ToWorker, WorkerInit } from './ipc/messages.ts';

// Beside this module and in its form: worker.ts in the sources, worker.js in an installed
// package (its JavaScript, compiled at `npm pack` by .ci/build-dist.ts).
const WORKER_ENTRY = fileURLToPath(new URL(`./worker${extname(import.meta.url)}`, import.meta.url));

export interface Addresses {
  readonly tcp: string;
  readonly http: string | null;
}

export interface SupervisorOptions {
  readonly count: number;
  readonly init: WorkerInit;
  readonly log: Logger;
  /** A batch of commands from a worker; `done` takes its replies, in order, once. */
  readonly onBatch: (cmds: readonly Command[], done: (replies: Reply[]) => void) => void;
  /** A worker's count of open TCP connections changed. */
  readonly onConnections: (workerId: number, count: number) => void;
  /** A worker left (its connections are gone). */
  readonly onExit: (workerId: number) => void;
}

export class Supervisor {
  private readonly opts: SupervisorOptions;
  private stopping = false;
  private draining: Promise<void> | undefined;
  /** What GET /ready answers, as last announced; 'starting' until then. */
  private readiness: 'starting' | 'ready' | 'stopping' = 'starting';
  private readonly backoff = new RespawnBackoff();

  constructor(opts: SupervisorOptions) {
    this.opts = opts;
    cluster.setupPrimary({ exec: WORKER_ENTRY, serialization: 'advanced' });
  }

  /** Forks all workers; resolves with the bound addresses once every one is listening. */
  start(): Promise<Addresses> {
    const started = Array.from({ length: this.opts.count }, () => this.fork());
    return Promise.all(started).then((addrs) => addrs[0]!);
  }

  /**
   * Asks every worker, listening or still starting, to finish and exit; kills the ones still
   * there after graceMs. No worker is forked afterwards. Calling it again returns the same promise.
   */
  drain(graceMs: number): Promise<void> {
    this.draining ??= this.drainAll(graceMs);
    return this.draining;
  }

  private async drainAll(graceMs: number): Promise<void> {
    this.stopping = true;
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    await Promise.all(workers.map((w) => new Promise<void>((resolve) => {
      if (w.isDead()) return resolve();
      const kill = setTimeout(() => w.process.kill('SIGKILL'), graceMs);
      w.once('exit', () => { clearTimeout(kill); resolve(); });
      this.send(w, { t: 'drain' });
    })));
  }

  /** The daemon is ready, or stopping: GET /ready answers 200, or 503, on every worker from now on. */
  announce(readiness: 'ready' | 'stopping'): void {
    this.readiness = readiness;
    for (const w of Object.values(cluster.workers ?? {})) if (w !== undefined) this.send(w, { t: 'readiness', readiness });
  }

  killAll(): void {
    this.stopping = true;
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGKILL');
  }

  private fork(): Promise<Addresses> {
    const worker = cluster.fork();
    const bornAt = Date.now();
    // Replies to a worker that died meanwhile are dropped by send(): its clients are gone.
    const link = new WorkerLink((seqs, replies) => this.send(worker, { t: 'replies', seqs, replies }));
    return new Promise((resolve, reject) => {
      let listening = false;
      worker.on('message', (msg: ToPrimary) => {
        switch (msg.t) {
          case 'listening':
            listening = true;
            resolve({ tcp: msg.tcp, http: msg.http });
            return;
          case 'listen-failed':
            reject(new Error(msg.message));
            return;
          case 'batch': {
            let batch;
            try {
              batch = decodeBatch(msg);
            } catch (err) {
              // Only a bug of ours makes a batch unreadable: its commands cannot be answered,
              // so the worker (and its clients' connections) is replaced.
              this.opts.log.error({ err: (err as Error).message, worker: worker.id }, 'unreadable command batch from a worker; replacing it');
              worker.process.kill('SIGKILL');
              return;
            }
            const { seqs, cmds } = batch;
            this.opts.onBatch(cmds, (replies) => link.reply(seqs, replies));
            return;
          }
          case 'connections':
            this.opts.onConnections(worker.id, msg.count);
            return;
          default: {
            const never: never = msg;
            this.opts.log.warn({ msg: never }, 'unknown message from worker');
          }
        }
      });
      worker.on('error', (err) => this.opts.log.warn({ err: err.message, worker: worker.id }, 'worker channel error'));
      worker.on('exit', (code, signal) => {
        this.opts.onExit(worker.id);
        if (!listening) return reject(new Error(`worker exited during startup (${signal ?? code})`));
        if (this.stopping) return;
        const delay = this.backoff.next(Date.now() - bornAt);
        this.opts.log.warn({ worker: worker.id, code, signal, respawnInMs: delay }, 'worker died; replacing it');
        setTimeout(() => {
          if (this.stopping) return;
          this.fork().catch((err: Error) => this.opts.log.error({ err: err.message }, 'replacement worker failed to start'));
        }, delay);
      });
      this.send(worker, { t: 'init', init: this.opts.init });
      if (this.readiness !== 'starting') this.send(worker, { t: 'readiness', readiness: this.readiness });
    });
  }

  private send(worker: Worker, msg: ToWorker): void {
    if (!worker.isConnected()) return;
    worker.send(msg, (err: Error | null) => {
      if (err) this.opts.log.debug({ err: err.message }, 'send to worker failed');
    });
  }
}
