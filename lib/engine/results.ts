// Execution results on their way from the runner pool to the next tick. The pool reports a
// result whenever a runner finishes; the engine applies results only inside a tick, so that
// every status change goes through one place and one commit. The queue exists before both the
// pool and the engine, so neither has to exist first. A result carries the attempt's record
// (lib/domain/attempt.ts), which the engine keeps as the job's last attempt.
import type { Attempt } from '../domain/attempt.ts';
import { Fifo } from '../domain/fifo.ts';

export interface ExecutionResult {
  readonly jobId: string;
  readonly attempt: string;
  readonly success: boolean;
  /** What the attempt was and how it went; absent only where a caller has none (tests). */
  readonly record?: Attempt | undefined;
  /**
   * Told once the result is applied (or found stale) and what it changed is durable: a node
   * that sent it over NATS forgets it only then (lib/placement/). Not told when the commit
   * fails or the engine forgets its results (a step-down): the node sends it again.
   */
  readonly durable?: (() => void) | undefined;
}

export class ExecutionResults {
  private readonly queued = new Fifo<ExecutionResult>();

  get length(): number {
    return this.queued.length;
  }

  push(jobId: string, attempt: string, success: boolean, record?: Attempt, durable?: () => void): void {
    this.queued.push(durable === undefined ? { jobId, attempt, success, record } : { jobId, attempt, success, record, durable });
  }

  /** The oldest result not taken yet, taken. */
  shift(): ExecutionResult | undefined {
    return this.queued.shift();
  }

  /** Everything pushed and not taken yet, in order. */
  take(): ExecutionResult[] {
    return this.queued.drain();
  }
}
