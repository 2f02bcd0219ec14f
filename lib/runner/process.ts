// Spawning a child process for the shell, direct and awf runners (tickd-protocol(7) RUNNERS).
//
// Invariants:
// - argv[0] is executed directly (no shell here); the environment is ours plus TICKD_JOB_ID,
//   TICKD_JOB_EXECUTION (nanoseconds, decimal), TICKD_ATTEMPT and TICKD_EXECUTION_KEY
//   (doc/execution.md "Keys to deduplicate on"), and for a schedule's occurrence TICKD_SCHEDULE
//   and TICKD_NOMINAL_NS (lib/schedule/occurrence.ts); stdin is /dev/null.
// - stderr is always read continuously, so the child never blocks on a full pipe, and its last
//   bytes are the outcome's stderr tail (MAX_OUTCOME_TEXT_BYTES, doc/execution.md "The attempt
//   record"). stdout is read the same way only with debug logging; otherwise it goes to
//   /dev/null. Only the last TAIL_BYTES of each are kept, and logged at debug with the status.
// - The outcome: exit status (success is 0), death by a signal, or a spawn error (ENOENT,
//   EACCES, ...), and `aborted` when the pool aborts; the returned promise never rejects.
// - The child leads its own process group, so aborting (shutdown) kills the whole group with
//   SIGKILL: a `sh -c` command's grandchildren die with it.
// - The outcome is decided at 'exit'. The stderr tail is taken at 'close' (the pipe drained), or
//   CLOSE_WAIT_MS after 'exit' if a grandchild keeps the pipe open: such a grandchild delays
//   the outcome by that much at most. The pipes are still drained until they close, and the
//   tails are logged then.
import { parseOccurrenceId } from '../schedule/occurrence.ts';
import { spawn } from 'node:child_process';
import { clipHead, clipTail, MAX_OUTCOME_TEXT_BYTES, type AttemptOutcome } from '../domain/attempt.ts';
import type { Logger } from '../log.ts';
import { ABORTED, runnerError, type Execution } from './execution.ts';
import { executionKeys } from './execution-key.ts';
import { errorText } from '../errors.ts';

export const TAIL_BYTES = 4096;
/** After 'exit', how long to wait for the stderr pipe to close before taking its tail. */
export const CLOSE_WAIT_MS = 50;

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

  /** The last `max` kept bytes as text (no prefix), starting at a character boundary. */
  tail(max: number): string {
    return clipTail(Buffer.concat(this.#chunks), max);
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
  const { key, attemptNo } = executionKeys(exec);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TICKD_JOB_ID: exec.jobId,
    TICKD_JOB_EXECUTION: exec.execution.toString(),
    TICKD_ATTEMPT: String(attemptNo),
    TICKD_EXECUTION_KEY: key,
  };
  // An occurrence of a schedule (tickd-protocol(7) SCHEDULES) says which, and its nominal time.
  const occurrence = parseOccurrenceId(exec.jobId);
  if (occurrence !== null) {
    env['TICKD_SCHEDULE'] = occurrence.schedule;
    env['TICKD_NOMINAL_NS'] = occurrence.nominal.toString();
  } else {
    delete env['TICKD_SCHEDULE'];
    delete env['TICKD_NOMINAL_NS'];
  }
  return env;
}

export function runProcess(argv: readonly string[], exec: Execution, log: Logger, signal: AbortSignal): Promise<AttemptOutcome> {
  const [file, ...args] = argv;
  if (file === undefined || file === '') {
    log.debug('runner has no executable');
    return Promise.resolve(runnerError('the runner has no executable'));
  }
  if (signal.aborted) return Promise.resolve(ABORTED);

  return new Promise<AttemptOutcome>((resolve) => {
    const stdout = new OutputTail();
    const stderr = new OutputTail();
    let settled = false;
    let status = 'running';
    let closed = false;
    let onClosed: (() => void) | undefined;
    let child: ReturnType<typeof spawn> | undefined;
    const onAbort = () => {
      if (child?.pid !== undefined && child.exitCode === null && child.signalCode === null) {
        try { process.kill(-child.pid, 'SIGKILL'); } catch { /* already gone */ }
      }
      status = 'aborted';
      settle(ABORTED);
    };
    const settle = (outcome: AttemptOutcome) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
    const spawnFailed = (err: unknown) => {
      status = `spawn error: ${errorText(err)}`;
      log.debug({ err: errorText(err), file }, 'runner could not start the process');
      settle({ kind: 'spawn_error', error: clipHead(errorText(err)) });
    };

    // stdout is only kept when debug logging will show it; otherwise it goes to /dev/null. One
    // pipe per running child (stderr) is what the outcome's tail costs.
    const keepOutput = log.debug();
    try {
      child = spawn(file, args, {
        env: childEnv(exec),
        stdio: ['ignore', keepOutput ? 'pipe' : 'ignore', 'pipe'],
        detached: true,
        windowsHide: true,
      });
    } catch (err) {
      spawnFailed(err);
      return;
    }
    // First of all: a failed spawn (EMFILE, ENOENT, EACCES) arrives as an 'error' event, and
    // an unhandled one would take the primary down. The stdio streams are absent then.
    child.on('error', spawnFailed);

    signal.addEventListener('abort', onAbort, { once: true });

    child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.stdout?.on('error', () => {});
    child.stderr?.on('error', () => {});

    child.on('exit', (code, sig) => {
      status = sig !== null ? `killed by ${sig}` : `exit ${code}`;
      let timer: NodeJS.Timeout | undefined;
      const decide = () => {
        clearTimeout(timer);
        const tail = stderr.tail(MAX_OUTCOME_TEXT_BYTES);
        settle(sig !== null ? { kind: 'signal', signal: sig, stderr: tail } : { kind: 'exit', status: code ?? -1, stderr: tail });
      };
      if (closed) return decide();
      onClosed = decide;
      timer = setTimeout(decide, CLOSE_WAIT_MS);
    });
    child.on('close', () => {
      closed = true;
      onClosed?.();
      if (keepOutput) {
        log.debug({ file, status, stdout: stdout.text(), stderr: stderr.text() }, 'runner process finished');
      }
    });
  });
}
