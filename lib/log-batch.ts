// Log lines leave the process in batches, not one write(2) each. At 2 000 "job fired" debug
// lines a second (bench row schedules-spread, whose lateness figure reads them) the primary made
// 1 400 stderr writes a second and spent 47-51 ms of each second in them, 228-270 writes over
// 1 ms and up to 7.7 ms, inside the tick's turns: the fd is non-blocking and nothing was left
// queued after them, so it was the call itself, which wakes the reader, and the writer then
// waiting for a CPU. Batched: 64 writes a second, 10-11 ms (bench/README, "Log lines in batches").
//
// A line waits FLUSH_DELAY_MS at most (or until MAX_BATCH bytes wait). lib/log.ts writes a
// record at info or above at once, with what waits before it: only debug lines wait, so what
// a process says at info and above is out before what it does next can be seen (a STAT
// answer, an exit), as it was line by line. What waits is written when the process exits; a
// SIGKILL loses the debug lines of the last FLUSH_DELAY_MS at most.

export interface LineOut {
  write(text: string): unknown;
}

export const FLUSH_DELAY_MS = 10;
/** Below a pipe's 64 KiB, so that a batch goes in one write where the reader keeps up. */
export const MAX_BATCH = 32 * 1024;

export class BatchedLines implements LineOut {
  readonly #out: LineOut;
  #parts: string[] = [];
  #bytes = 0;
  #timer: NodeJS.Timeout | null = null;

  constructor(out: LineOut) {
    this.#out = out;
  }

  write(text: string): boolean {
    this.#parts.push(text);
    this.#bytes += text.length;
    if (this.#bytes >= MAX_BATCH) this.flush();
    else if (this.#timer === null) this.#timer = setTimeout(() => this.flush(), FLUSH_DELAY_MS).unref();
    return true;
  }

  /** Writes what waits, in one call; never throws (a log statement must not fail on its line). */
  flush(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#parts.length === 0) return;
    const text = this.#parts.length === 1 ? this.#parts[0]! : this.#parts.join('');
    this.#parts = [];
    this.#bytes = 0;
    try {
      this.#out.write(text);
    } catch {
      // As prettyStream: the line is lost, the caller goes on.
    }
  }
}

let stderr: BatchedLines | null = null;

/** The process's one batch for stderr, shared by its loggers so that lines keep their order. */
export function stderrLines(): BatchedLines {
  if (stderr === null) {
    const lines = new BatchedLines(process.stderr);
    process.on('exit', () => lines.flush());
    stderr = lines;
  }
  return stderr;
}

/** Writes the log lines that wait now: before the process writes to stderr itself. */
export function flushLog(): void {
  stderr?.flush();
}
