// An HttpSink (sink.ts) in a process of its own (sink-child.ts), for the rows whose figure is
// an arrival time: issue 22 sets the lateness target "at an HTTP sink in a separate process".
// In the bench process, the sink's clock also waited for the bench's own work: after loading
// 100 000 SETs its loop stalled up to 26.5 ms in the probes' window, its garbage, not the daemon's.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Arrival } from './sink.ts';

type Question = { t: 'count' } | { t: 'wait'; n: number; timeoutMs: number } | { t: 'collect' };

export type ToSink = Question & { id: number };

export type FromSink =
  | { t: 'ready'; url: string }
  | { t: 'count'; id: number; received: number }
  | { t: 'waited'; id: number; ok: boolean }
  | { t: 'collected'; id: number; arrivals: Arrival[]; malformed: number; stallMs: number };

export interface Collected {
  readonly arrivals: Arrival[];
  readonly malformed: number;
  /** The sink process's event loop: its longest stall since the last collect. */
  readonly stallMs: number;
}

const ENTRY = fileURLToPath(new URL('./sink-child.ts', import.meta.url));

export class SinkProcess {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (msg: FromSink) => void; reject: (err: Error) => void }>();

  private readonly child: ChildProcess;
  readonly url: string;

  private constructor(child: ChildProcess, url: string) {
    this.child = child;
    this.url = url;
    child.on('message', (msg: FromSink) => {
      if (msg.t === 'ready') return;
      const waiting = this.pending.get(msg.id);
      this.pending.delete(msg.id);
      waiting?.resolve(msg);
    });
    // A question the process will never answer fails the row instead of hanging it.
    child.on('exit', (code, signal) => {
      for (const { reject } of this.pending.values()) reject(new Error(`the sink process exited (${code ?? signal})`));
      this.pending.clear();
    });
  }

  static start(): Promise<SinkProcess> {
    const child = fork(ENTRY, [], { serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    return new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`the sink process exited (${code}) before it listened`)));
      child.once('message', (msg: FromSink) => {
        if (msg.t === 'ready') resolve(new SinkProcess(child, msg.url));
      });
    });
  }

  private ask<T extends FromSink['t']>(question: Question, answer: T): Promise<Extract<FromSink, { t: T }>> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      if (!this.child.connected) { reject(new Error('the sink process is gone')); return; }
      this.pending.set(id, {
        resolve: (msg) => {
          if (msg.t === answer) resolve(msg as Extract<FromSink, { t: T }>);
          else reject(new Error(`the sink process answered ${msg.t} to ${question.t}`));
        },
        reject,
      });
      this.child.send({ ...question, id });
    });
  }

  async received(): Promise<number> {
    return (await this.ask({ t: 'count' }, 'count')).received;
  }

  /** Resolves once `n` requests arrived in all; false if `timeoutMs` passed first. */
  async waitFor(n: number, timeoutMs: number): Promise<boolean> {
    return (await this.ask({ t: 'wait', n, timeoutMs }, 'waited')).ok;
  }

  /** The arrivals since the last collect (the first: since the start). */
  collect(): Promise<Collected> {
    return this.ask({ t: 'collect' }, 'collected');
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.disconnect();
    await exited;
  }
}
