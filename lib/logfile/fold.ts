// The fold at the heart of compaction: keep the last frame per (kind, identifier), drop the
// entries whose last record is a removal, write what is left to a new file and fsync it.
// Runs inside the compaction worker thread (compact-worker.ts), never on the primary's event
// loop. Frames are copied byte for byte (after being fully decoded, so a damaged source is
// refused rather than propagated): the output is a valid logfile replaying to the same state.
import { open } from 'node:fs/promises';
import { foldRecord } from './frames.ts';
import { LOGFILE_MODE, writeFully } from './fsutil.ts';
import { scanFile } from './replay.ts';

const WRITE_CHUNK_BYTES = 1024 * 1024;

export interface FoldResult {
  readonly inputRecords: number;
  readonly outputRecords: number;
  readonly inputBytes: number;
  readonly outputBytes: number;
  /** An incomplete final frame of the source, left out (never acknowledged). */
  readonly tornBytes: number;
}

/** Folds `src` into `dst` (created or truncated; synced before this resolves). */
export async function foldLogfile(src: string, dst: string): Promise<FoldResult> {
  const latest = new Map<string, Buffer>();
  const input = await open(src, 'r');
  let scan;
  let inputBytes;
  try {
    inputBytes = (await input.stat()).size;
    // the frame is copied out: `buf` is reused for the next chunk
    scan = await scanFile(input, src, 0, inputBytes, (rec, buf, start, end) => foldRecord(latest, rec, () => Buffer.from(buf.subarray(start, end))));
  } finally {
    await input.close();
  }

  const output = await open(dst, 'w', LOGFILE_MODE);
  let outputBytes = 0;
  try {
    let batch: Buffer[] = [];
    let batchBytes = 0;
    for (const frame of latest.values()) {
      batch.push(frame);
      batchBytes += frame.length;
      if (batchBytes >= WRITE_CHUNK_BYTES) {
        await writeFully(output, Buffer.concat(batch, batchBytes));
        outputBytes += batchBytes;
        batch = [];
        batchBytes = 0;
      }
    }
    if (batchBytes > 0) await writeFully(output, Buffer.concat(batch, batchBytes));
    outputBytes += batchBytes;
    await output.sync();
  } finally {
    await output.close();
  }
  return {
    inputRecords: scan.records,
    outputRecords: latest.size,
    inputBytes,
    outputBytes,
    tornBytes: inputBytes - scan.tornAt,
  };
}
