// Read side of `tickd dump`: windowed, read-only scans of a logfile with output flushed
// between windows (so a huge file never piles up in memory), and the line sink that respects
// the output stream's backpressure. Never writes to the logfile.
import { once } from 'node:events';
import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import { isNotFound } from './fsutil.ts';
import type { LogRecord } from '../engine/journal.ts';
import { scanFile } from './replay.ts';

// Output is flushed after each window: small enough for `dump | head` to answer at once.
const WINDOW_BYTES = 1024 * 1024;

/** Lines for the output stream, written in batches; stops quietly if the reader goes away. */
export class LineSink {
  private parts: string[] = [];
  private readonly out: NodeJS.WritableStream;
  broken = false;

  constructor(out: NodeJS.WritableStream) {
    this.out = out;
    out.on('error', () => {
      this.broken = true; // EPIPE (`tickd dump ... | head`): nothing more to say
    });
  }

  line(text: string): void {
    if (!this.broken) this.parts.push(text);
  }

  async flush(): Promise<void> {
    if (this.parts.length === 0 || this.broken) return;
    const data = `${this.parts.join('\n')}\n`;
    this.parts = [];
    if (!this.out.write(data)) {
      await once(this.out, 'drain').catch(() => {
        this.broken = true;
      });
    }
  }
}

/**
 * Decodes the frames in [from, to) of an open logfile, flushing `sink` after every window.
 * Returns where the first incomplete frame starts (== to when there is none).
 * Throws LogfileUnreadableError (replay.ts) for a complete frame that does not decode.
 */
export async function readRange(
  handle: FileHandle,
  path: string,
  from: number,
  to: number,
  visit: (rec: LogRecord) => void,
  sink: LineSink,
): Promise<number> {
  let at = from;
  while (at < to) {
    const windowEnd = Math.min(to, at + WINDOW_BYTES);
    let scan = await scanFile(handle, path, at, windowEnd, visit);
    if (scan.tornAt === at && windowEnd < to) {
      // a frame larger than the window, or zero bytes up to the window's end: look further
      scan = await scanFile(handle, path, at, to, visit);
    }
    await sink.flush();
    if (scan.tornAt === at || sink.broken) return scan.tornAt;
    at = scan.tornAt;
  }
  return at;
}

/** Every record of a whole file (a missing file has none); stops at a torn tail. */
export async function readWholeFile(path: string, visit: (rec: LogRecord) => void, sink: LineSink): Promise<number> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (err) {
    if (isNotFound(err)) return 0;
    throw err;
  }
  try {
    return await readRange(handle, path, 0, (await handle.stat()).size, visit, sink);
  } finally {
    await handle.close();
  }
}
