// Small filesystem helpers shared by the journal, the replay, the fold and the compactor.
// Durability rule they serve: a rename or a file creation is only trusted once the directory
// that holds it has been fsynced.
import { open, stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Files the logfile code creates may hold credentials (amqp/redis URLs): owner-only. */
export const LOGFILE_MODE = 0o600;

export async function fsyncDir(path: string): Promise<void> {
  const handle = await open(dirname(path), 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export function isNotFound(err: unknown): boolean {
  return (err as NodeJS.ErrnoException | null)?.code === 'ENOENT';
}

/** Where compaction moves the log it folds; replayed before the log itself at startup. */
export function toCompressPath(path: string): string {
  return `${path}.to_compress`;
}

/** A compaction's output before it replaces the log; never trusted at startup. */
export function compactingPath(path: string): string {
  return `${path}.compacting`;
}

export async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

/** Writes all of `data` at the handle's position (a write may be short). */
export async function writeFully(handle: FileHandle, data: Buffer): Promise<void> {
  for (let at = 0; at < data.length;) {
    const { bytesWritten } = await handle.write(data, at, data.length - at);
    if (!(bytesWritten > 0)) throw new Error('write made no progress');
    at += bytesWritten;
  }
}
