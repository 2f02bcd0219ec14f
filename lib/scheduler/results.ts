// Execution results on their way from the runner pool to the next tick. The pool reports a
// result whenever a runner finishes; the engine applies results only inside a tick, so that
// every status change goes through one place and one commit. The queue exists before both the
// pool and the engine, so neither has to exist first.
export interface ExecutionResult {
  readonly jobId: string;
  readonly attempt: string;
  readonly success: boolean;
}

export class ExecutionResults {
  private queued: ExecutionResult[] = [];

  push(jobId: string, attempt: string, success: boolean): void {
    this.queued.push({ jobId, attempt, success });
  }

  /** Everything pushed since the last take, in order. */
  take(): ExecutionResult[] {
    const taken = this.queued;
    if (taken.length > 0) this.queued = [];
    return taken;
  }
}
