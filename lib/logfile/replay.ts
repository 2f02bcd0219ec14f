// Startup replay of the logfile (doc/logfile-format.md): feeds every record, in order, to the
// engine.
//
// - The file is read in large chunks and decoded in place (no per-record Buffer).
// - An incomplete final frame is a torn write that was never acknowledged: it is cut off
//   (ftruncate) with a warning. So is a tail of zero bytes, which is what some filesystems
//   leave after a crash that extended the file before its data reached the disk.
// - A complete frame that does not decode stops everything: LogfileCorruptError names the
//   file and the byte offset. Nothing is skipped silently.
// - A record of a newer tickd (an extension record that needs a format above FORMAT_VERSION,
//   lib/domain/format.ts) is no damage: LogfileTooNewError names the format and the offset.
//   It stops everything too, before the torn-tail cut, so the file is left exactly as it is
//   for the newer tickd it belongs to. (A record of a newer tickd inside a torn tail is not
//   looked at: it was never acknowledged, and the newer tickd would cut it off as well.)
// - Startup order: a leftover `<path>.to_compress` (an interrupted compaction) is replayed
//   first, then `<path>`. Every record states a whole value, so records that are in both
//   (a compaction that had already replaced `<path>`) do no harm when applied twice.
//   `<path>.compacting` is an unfinished compaction output and is deleted.
import { open, rm } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import type { Logger } from '../log.ts';
import { FRAME_HEADER_BYTES, NewerRecordError, RecordDecodeError } from './codec.ts';
import { forEachFrame } from './frames.ts';
import { compactingPath, exists, isNotFound, toCompressPath } from './fsutil.ts';
import type { LogRecord } from '../engine/journal.ts';

const CHUNK_BYTES = 8 * 1024 * 1024;

/**
 * A complete record this tickd cannot read, named with its file and offset: damage
 * (LogfileCorruptError) or a newer tickd's (LogfileTooNewError). Readers that only report
 * and stop catch this; startup tells the two apart (lib/persistence/open.ts).
 */
export abstract class LogfileUnreadableError extends Error {
  readonly path: string;
  /** File offset of the frame that does not decode. */
  readonly offset: number;
  constructor(path: string, cause: RecordDecodeError) {
    super(`${path}: ${cause.message}`, { cause });
    this.path = path;
    this.offset = cause.frameOffset;
  }
}

export class LogfileCorruptError extends LogfileUnreadableError {
  override readonly name = 'LogfileCorruptError';
}

export class LogfileTooNewError extends LogfileUnreadableError {
  override readonly name = 'LogfileTooNewError';
  /** The format the record needs (above FORMAT_VERSION). */
  readonly needs: number;
  constructor(path: string, cause: NewerRecordError) {
    super(path, cause);
    this.needs = cause.needs;
  }
}

export interface ReplayResult {
  readonly records: number;
  /** Bytes cut off the end as a torn write (0 when the file ended cleanly). */
  readonly tornBytes: number;
}

export interface StartupReplay extends ReplayResult {
  /** A `.to_compress` file was found (and replayed): the compactor must fold it first. */
  readonly leftover: boolean;
}

/** Replays one logfile; a missing file is an empty one. */
export async function replayLogfile(path: string, onRecord: (rec: LogRecord) => void, log: Logger): Promise<ReplayResult> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'r+');
  } catch (err) {
    if (isNotFound(err)) return { records: 0, tornBytes: 0 };
    throw err;
  }
  try {
    const { size } = await handle.stat();
    const scan = await scanFile(handle, path, 0, size, onRecord);
    const tornBytes = size - scan.tornAt;
    if (tornBytes > 0) {
      log.warn({ path, offset: scan.tornAt, bytes: tornBytes }, 'logfile ends with an incomplete record (a torn write); cutting it off');
      await handle.truncate(scan.tornAt);
      await handle.sync();
    }
    return { records: scan.records, tornBytes };
  } finally {
    await handle.close();
  }
}

/** The whole startup replay: `.to_compress` first (if any), then the log itself. */
export async function replayStartup(path: string, onRecord: (rec: LogRecord) => void, log: Logger): Promise<StartupReplay> {
  await rm(compactingPath(path), { force: true });
  const leftoverPath = toCompressPath(path);
  const leftover = await exists(leftoverPath);
  const before = leftover ? await replayLogfile(leftoverPath, onRecord, log) : { records: 0, tornBytes: 0 };
  const main = await replayLogfile(path, onRecord, log);
  return {
    records: before.records + main.records,
    tornBytes: before.tornBytes + main.tornBytes,
    leftover,
  };
}

export interface Scan {
  readonly records: number;
  /** Where the first incomplete frame starts (a torn tail); == the scanned size when none. */
  readonly tornAt: number;
}

/** Gets each record with its frame's bytes: buf[start, end) (valid only during the call). */
export type FrameVisitor = (rec: LogRecord, buf: Buffer, start: number, end: number) => void;

/**
 * Decodes the frames of an open logfile from offset `from` up to `size`, in large chunks.
 * A newer tickd's record throws LogfileTooNewError. A frame that does not decode throws
 * LogfileCorruptError, unless everything from it to `size` is zero bytes (then it counts as
 * the torn tail).
 */
export async function scanFile(handle: FileHandle, path: string, from: number, size: number, visit: FrameVisitor): Promise<Scan> {
  let buf = Buffer.allocUnsafe(Math.max(FRAME_HEADER_BYTES, Math.min(CHUNK_BYTES, size - from)));
  let bufAt = from; // file offset of buf[0]
  let have = 0; // valid bytes in buf
  let readAt = from; // file offset of the next read
  let records = 0;
  const onRecord = (rec: LogRecord, start: number, end: number) => {
    records++;
    visit(rec, buf, start, end);
  };
  for (;;) {
    while (have < buf.length && readAt < size) {
      const { bytesRead } = await handle.read(buf, have, Math.min(buf.length - have, size - readAt), readAt);
      if (bytesRead === 0) size = readAt; // the file is shorter than it was: stop there
      have += bytesRead;
      readAt += bytesRead;
    }
    let used: number;
    try {
      used = forEachFrame(buf, bufAt, onRecord, have);
    } catch (err) {
      if (err instanceof NewerRecordError) throw new LogfileTooNewError(path, err);
      if (!(err instanceof RecordDecodeError)) throw err;
      if (await zeroFrom(handle, err.frameOffset, size)) return { records, tornAt: err.frameOffset };
      throw new LogfileCorruptError(path, err);
    }
    if (readAt >= size) return { records, tornAt: bufAt + used };
    const rest = have - used;
    if (used === 0 && rest === buf.length) {
      // One frame larger than the buffer (frames are at most 16 MiB): grow to hold it.
      const bigger = Buffer.allocUnsafe(Math.max(buf.length * 2, FRAME_HEADER_BYTES + buf.readUInt32BE(0)));
      buf.copy(bigger, 0, 0, have);
      buf = bigger;
    } else {
      buf.copy(buf, 0, used, have);
    }
    bufAt += used;
    have = rest;
  }
}

/** True when every byte of [from, size) is zero (an unwritten, crash-extended tail). */
async function zeroFrom(handle: FileHandle, from: number, size: number): Promise<boolean> {
  const buf = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, Math.max(1, size - from)));
  for (let at = from; at < size;) {
    const { bytesRead } = await handle.read(buf, 0, Math.min(buf.length, size - at), at);
    if (bytesRead === 0) return false;
    for (let i = 0; i < bytesRead; i++) if (buf[i] !== 0) return false;
    at += bytesRead;
  }
  return true;
}
