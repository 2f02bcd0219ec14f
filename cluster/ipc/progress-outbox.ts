// The runner child's side of 'progress' (cluster/ipc/runner-messages.ts): the starts and the
// responses of one event-loop turn leave together in one message once the turn's I/O is done,
// as the other IPC links batch (channel.ts TurnFlush). A turn's batch is cut at MAX_BATCH entries
// (starts and responses together), so no message grows with --max-inflight.
import { TurnFlush } from './channel.ts';
import type { ExecutionResponse, FromRunnerChild } from './runner-messages.ts';

type Progress = Extract<FromRunnerChild, { t: 'progress' }>;

export class ProgressOutbox {
  private attempts: string[] = [];
  private startedNs: bigint[] = [];
  private responses: ExecutionResponse[] = [];
  private readonly turn = new TurnFlush(() => this.flush());
  private readonly send: (msg: Progress) => void;

  constructor(send: (msg: Progress) => void) {
    this.send = send;
  }

  started(attempt: string, ns: bigint): void {
    this.attempts.push(attempt);
    this.startedNs.push(ns);
    this.turn.added(this.attempts.length + this.responses.length);
  }

  response(r: ExecutionResponse): void {
    this.responses.push(r);
    this.turn.added(this.attempts.length + this.responses.length);
  }

  /** Sends what is held now (before 'stopped', say); nothing when nothing is. */
  flush(): void {
    if (this.attempts.length === 0 && this.responses.length === 0) return;
    const msg: Progress = { t: 'progress', started: { attempts: this.attempts, startedNs: this.startedNs }, responses: this.responses };
    this.attempts = [];
    this.startedNs = [];
    this.responses = [];
    this.send(msg);
  }
}
