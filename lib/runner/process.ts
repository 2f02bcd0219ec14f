// Spawning a child process for the shell, direct and awf runners (tickd-protocol(7) RUNNERS).
//
// Invariants:
// - argv[0] is executed directly (no shell here); the environment is ours plus TICKD_JOB_ID and
//   TICKD_JOB_EXECUTION (nanoseconds, decimal); stdin is /dev/null.
// - With debug logging, stdout and stderr are read continuously so the child never blocks on a
//   full pipe; only the last TAIL_BYTES of each are kept, and logged with the exit status.
//   Otherwise they go to /dev/null: never blocking either, and no pipes held by the primary.
// - Success is exit status 0. A spawn error (ENOENT, EACCES, ...) or death by signal is failure;
//   the returned promise never rejects.
// - The child leads its own process group, so aborting (shutdown) kills the whole group with
//   SIGKILL: a `sh -c` command's grandchildren die with it.
// - The result is decided at 'exit'. A grandchild that keeps the pipes open does not delay it;
//   the pipes are still drained until they close, and the tails are logged then.
import { spawn } from 'node:child_process';
import type { Logger } from '../log.ts';
import { errorText, type Execution } from './execution.ts';

export const TAIL_BYTES = 4096;

/** Keeps the last `limit` bytes written to it. */
export class OutputTail {
  readonly limit: number;
  #chunks: Buffer[] = [];
  #size = 0;
  #dropped = 0;

  constructor(limit = TAIL_BYTES) {
    this.limit = limit;
  }

  push(chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.#size += chunk.length;
    // Drop whole chunks only while the rest still covers the limit: bounded memory, exact tail.
    while (this.#chunks.length > 1 && this.#size - this.#chunks[0]!.length >= this.limit) {
      const first = this.#chunks.shift()!;
      this.#size -= first.length;
      this.#dropped += first.length;
    }
  }

  /** The kept bytes as text, prefixed with how many earlier bytes were dropped. */
  text(): string {
    const all = Buffer.concat(this.#chunks);
    const cut = Math.max(0, all.length - this.limit);
    const skipped = this.#dropped + cut;
    const body = all.subarray(cut).toString('utf8');
    return skipped > 0 ? `[${skipped} bytes skipped]${body}` : body;
  }
}

function childEnv(exec: Execution): NodeJS.ProcessEnv {
  return { ...process.env, TICKD_JOB_ID: exec.jobId, TICKD_JOB_EXECUTION: exec.execution.toString() };
}

export function runProcess(argv: readonly string[], exec: Execution, log: Logger, signal: AbortSignal): Promise<boolean> {
  const [file, ...args] = argv;
  if (file === undefined || file === '') {
    log.warn('runner has no executable');
    return Promise.resolve(false);
  }
  if (signal.aborted) return Promise.resolve(false);

  return new Promise<boolean>((resolve) => {
    const stdout = new OutputTail();
    const stderr = new OutputTail();
    let settled = false;
    let status = 'running';
    const settle = (ok: boolean) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      resolve(ok);
    };

    // Output is only kept when debug logging will show it; otherwise the child writes to
    // /dev/null, which never blocks it and costs the primary no pipes (a burst of thousands
    // of executions must not exhaust file descriptors).
    const keepOutput = log.debug();
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(file, args, {
        env: childEnv(exec),
        stdio: ['ignore', keepOutput ? 'pipe' : 'ignore', keepOutput ? 'pipe' : 'ignore'],
        detached: true,
        windowsHide: true,
      });
    } catch (err) {
      log.warn({ err: errorText(err), file }, 'runner could not start the process');
      resolve(false);
      return;
    }
    // First of all: a failed spawn (EMFILE, ENOENT, EACCES) arrives as an 'error' event, and
    // an unhandled one would take the primary down. The stdio streams are absent then.
    child.on('error', (err) => {
      status = `spawn error: ${errorText(err)}`;
      log.warn({ err: errorText(err), file }, 'runner could not start the process');
      settle(false);
    });

    const onAbort = () => {
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
        try { process.kill(-child.pid, 'SIGKILL'); } catch { /* already gone */ }
      }
      status = 'aborted';
      settle(false);
    };
    signal.addEventListener('abort', onAbort, { once: true });

    child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.stdout?.on('error', () => {});
    child.stderr?.on('error', () => {});

    child.on('exit', (code, sig) => {
      status = sig !== null ? `killed by ${sig}` : `exit ${code}`;
      settle(code === 0);
    });
    child.on('close', () => {
      if (keepOutput) {
        log.debug({ file, status, stdout: stdout.text(), stderr: stderr.text() }, 'runner process finished');
      }
    });
  });
}
