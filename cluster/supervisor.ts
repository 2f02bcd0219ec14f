// Forks and keeps the connection workers. Startup: every worker must report 'listening'
// (TCP first, then HTTP) or the daemon does not start. Afterwards a worker that dies is
// replaced with exponential backoff (reset once a worker has lived a while), so a crash loop
// cannot spin the CPU while a one-off crash is repaired at once. Once drain() or killAll()
// was called no worker is forked again, and drain() reaches workers still starting too.
// Every send to a worker carries a callback and every worker has an 'error' listener: a
// worker that vanished costs a log line, never the primary.
import cluster, { type Worker } from 'node:cluster';
import { fileURLToPath } from 'node:url';
import type { Reply } from '../lib/domain/command.ts';
import type { Logger } from '../lib/log.ts';
import { TurnBatcher } from './ipc/channel.ts';
import type { ToPrimary, ToWorker, WorkerInit } from './ipc/messages.ts';

const WORKER_ENTRY = fileURLToPath(new URL('./worker.ts', import.meta.url));
const BACKOFF_MIN_MS = 100;
const BACKOFF_MAX_MS = 5000;
const STABLE_AFTER_MS = 10_000;

export interface Addresses {
  readonly tcp: string;
  readonly http: string | null;
}

export interface SupervisorOptions {
  readonly count: number;
  readonly init: WorkerInit;
  readonly log: Logger;
  readonly onMessage: (worker: Worker, msg: ToPrimary) => void;
  /** A worker left (its connections are gone). */
  readonly onExit: (worker: Worker) => void;
}

export class Supervisor {
  private readonly opts: SupervisorOptions;
  private readonly repliers = new Map<number, TurnBatcher<number, Reply>>();
  private stopping = false;
  private draining: Promise<void> | undefined;
  private backoff = BACKOFF_MIN_MS;

  constructor(opts: SupervisorOptions) {
    this.opts = opts;
    cluster.setupPrimary({ exec: WORKER_ENTRY, serialization: 'advanced' });
  }

  /** Forks all workers; resolves with the bound addresses once every one is listening. */
  start(): Promise<Addresses> {
    const started = Array.from({ length: this.opts.count }, () => this.fork());
    return Promise.all(started).then((addrs) => addrs[0]!);
  }

  reply(worker: Worker, seqs: readonly number[], replies: readonly Reply[]): void {
    const out = this.repliers.get(worker.id);
    if (out === undefined) return; // the worker died; its clients are gone
    for (let i = 0; i < seqs.length; i++) out.push(seqs[i]!, replies[i]!);
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

  killAll(): void {
    this.stopping = true;
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGKILL');
  }

  private fork(): Promise<Addresses> {
    const worker = cluster.fork();
    const bornAt = Date.now();
    this.repliers.set(worker.id, new TurnBatcher((seqs, replies) => this.send(worker, { t: 'replies', seqs, replies })));
    return new Promise((resolve, reject) => {
      let listening = false;
      worker.on('message', (msg: ToPrimary) => {
        if (msg.t === 'listening') {
          listening = true;
          resolve({ tcp: msg.tcp, http: msg.http });
        } else if (msg.t === 'listen-failed') {
          reject(new Error(msg.message));
        } else {
          this.opts.onMessage(worker, msg);
        }
      });
      worker.on('error', (err) => this.opts.log.warn({ err: err.message, worker: worker.id }, 'worker channel error'));
      worker.on('exit', (code, signal) => {
        this.repliers.delete(worker.id);
        this.opts.onExit(worker);
        if (!listening) return reject(new Error(`worker exited during startup (${signal ?? code})`));
        if (this.stopping) return;
        if (Date.now() - bornAt > STABLE_AFTER_MS) this.backoff = BACKOFF_MIN_MS;
        const delay = this.backoff;
        this.backoff = Math.min(BACKOFF_MAX_MS, this.backoff * 2);
        this.opts.log.warn({ worker: worker.id, code, signal, respawnInMs: delay }, 'worker died; replacing it');
        setTimeout(() => {
          if (this.stopping) return;
          this.fork().catch((err: Error) => this.opts.log.error({ err: err.message }, 'replacement worker failed to start'));
        }, delay);
      });
      this.send(worker, { t: 'init', init: this.opts.init });
    });
  }

  private send(worker: Worker, msg: ToWorker): void {
    if (!worker.isConnected()) return;
    worker.send(msg, (err: Error | null) => {
      if (err) this.opts.log.debug({ err: err.message }, 'send to worker failed');
    });
  }
}
