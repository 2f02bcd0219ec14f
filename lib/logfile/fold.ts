// The fold at the heart of compaction: keep the last frame per (kind, identifier), drop the
// entries whose last record is a removal, write what is left to a new file and fsync it.
// Runs in the compaction child process (cluster/fold-child.ts), never on the primary's event
// loop. Frames are copied byte for byte (after being fully decoded, so a damaged source is
// refused rather than propagated): the output is a valid logfile replaying to the same state.
//
// The fold keeps only the file offset of each entry's last frame, and a second sequential pass
// over the source copies those frames out in offset order (which is the order of last write).
// Keeping a Buffer per entry instead made a million small objects for the GC to copy: scavenges
// of 40+ ms.
//
// Format marks (doc/logfile-format.md, Extension records) are no entries, but the output must
// not forget them: a mark is how a log says that it was written at a format an older tickd
// must not take part in. The output starts with one mark, of the highest format seen: the
// folded records come from under every mark of the source, mixed, so the file as a whole is
// at the highest of them. A source without marks gives an output without one (a ztick log
// stays a ztick log).
import { open, type FileHandle } from 'node:fs/promises';
import { encodeRecord, FRAME_HEADER_BYTES } from './codec.ts';
import { foldRecord } from './frames.ts';
import { LOGFILE_MODE, writeFully } from './fsutil.ts';
import { scanFile } from './replay.ts';

const CHUNK_BYTES = 1024 * 1024;

export interface FoldResult {
  readonly inputRecords: number;
  readonly outputRecords: number;
  readonly inputBytes: number;
  readonly outputBytes: number;
  /** An incomplete final frame of the source, left out (never acknowledged). */
  readonly tornBytes: number;
}

/**
 * Folds `src` into the new file `dst`, synced before this resolves (unless `sync` is false: a
 * temporary file, as a cluster checkpoint's). `dst` must not exist: the fold never writes into
 * a file someone else made (a leftover, or another process's output).
 */
export async function foldLogfile(src: string, dst: string, { sync = true } = {}): Promise<FoldResult> {
  const output = await open(dst, 'wx', LOGFILE_MODE);
  try {
    return await foldInto(src, output, sync);
  } finally {
    await output.close();
  }
}

async function foldInto(src: string, output: FileHandle, sync: boolean): Promise<FoldResult> {
  const latest = new Map<string, number>(); // entry -> file offset of its last frame
  const input = await open(src, 'r');
  try {
    const inputBytes = (await input.stat()).size;
    let offset = 0; // frames are visited in file order, back to back from offset 0
    let format = 0; // the highest format mark seen; 0: none
    const scan = await scanFile(input, src, 0, inputBytes, (rec, _buf, start, end) => {
      if (rec.t === 'format') format = Math.max(format, rec.version);
      else foldRecord(latest, rec, () => offset);
      offset += end - start;
    });
    const head = format > 0 ? encodeRecord({ t: 'format', version: format }) : Buffer.alloc(0);
    if (head.length > 0) await writeFully(output, head);
    const outputBytes = head.length + await copyFrames(input, latest.values(), scan.tornAt, output);
    if (sync) await output.sync();
    const outputRecords = latest.size + (format > 0 ? 1 : 0);
    return { inputRecords: scan.records, outputRecords, inputBytes, outputBytes, tornBytes: inputBytes - scan.tornAt };
  } finally {
    await input.close();
  }
}

/** Copies the frames starting at `offsets` (ascending, all below `end`) to `output`. */
async function copyFrames(input: FileHandle, offsets: Iterable<number>, end: number, output: FileHandle): Promise<number> {
  const window = new SourceWindow(input, end);
  const out = Buffer.allocUnsafe(CHUNK_BYTES);
  let used = 0;
  let written = 0;
  for (const at of offsets) {
    const frame = await window.frameAt(at);
    if (used + frame.length > out.length) {
      await writeFully(output, out.subarray(0, used));
      written += used;
      used = 0;
    }
    if (frame.length > out.length) {
      await writeFully(output, frame);
      written += frame.length;
    } else {
      frame.copy(out, used);
      used += frame.length;
    }
  }
  if (used > 0) await writeFully(output, out.subarray(0, used));
  return written + used;
}

/** Sequential reads of the source in large chunks, serving frames at ascending offsets. */
class SourceWindow {
  private buf = Buffer.allocUnsafe(CHUNK_BYTES);
  private start = 0;
  private length = 0;
  private readonly input: FileHandle;
  private readonly end: number;

  constructor(input: FileHandle, end: number) {
    this.input = input;
    this.end = end;
  }

  /** The whole frame at file offset `at`; valid until the next call. */
  async frameAt(at: number): Promise<Buffer> {
    await this.cover(at, FRAME_HEADER_BYTES);
    const size = FRAME_HEADER_BYTES + this.buf.readUInt32BE(at - this.start);
    await this.cover(at, size);
    return this.buf.subarray(at - this.start, at - this.start + size);
  }

  private async cover(at: number, size: number): Promise<void> {
    if (at >= this.start && at + size <= this.start + this.length) return;
    if (size > this.buf.length) this.buf = Buffer.allocUnsafe(size);
    this.start = at;
    this.length = 0;
    const want = Math.min(this.buf.length, this.end - at);
    while (this.length < want) {
      const { bytesRead } = await this.input.read(this.buf, this.length, want - this.length, at + this.length);
      if (bytesRead === 0) break;
      this.length += bytesRead;
    }
    if (this.length < size) throw new Error(`the source ended at ${at + this.length} inside the frame at ${at}`);
  }
}
