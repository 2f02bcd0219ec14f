// `tickd dump --follow`: keeps printing records as they are appended, across compactions.
//
// The file is polled (stat). Same inode and longer: the new frames are printed (an incomplete
// last frame is a write in progress and waits for the next poll). Otherwise the file was
// replaced or cut short; what is left in the old descriptor is printed first, then:
// - rotation (compaction step 1: the old inode is now `<path>.to_compress`): the new log is
//   printed from its start, leaving out records that restate exactly what is shown (a
//   removal of an entry not shown, an entry shown with the same line). A fresh log holds only
//   new records, but when the final swap came before the next poll too (and `.to_compress`
//   is not unlinked yet), the log already is the compacted history, which restates
//   everything shown, followed by the new records;
// - anything else (compaction's final swap, or a rewrite): the new history (`.to_compress` if
//   still there, then the log) is folded to a state and only its differences from what was
//   shown are printed: changed or new entries as records, vanished ones as removals. So a
//   compaction prints nothing when nothing changed, and never loses a change.
import type { FileHandle } from 'node:fs/promises';
import { open, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { FORMAT_KEY, isRemoval, recordKey } from './frames.ts';
import { formatRecord } from './dump-format.ts';
import type { DumpFormat } from './dump-format.ts';
import { LineSink, readRange, readWholeFile } from './dump-read.ts';
import { isNotFound, toCompressPath } from './fsutil.ts';
import type { LogRecord } from '../engine/journal.ts';

export interface FollowContext {
  readonly path: string;
  readonly format: DumpFormat;
  readonly sink: LineSink;
  /** key -> line of every entry shown and not removed since; kept up to date by show(). */
  readonly shown: Map<string, string>;
  readonly show: (rec: LogRecord) => void;
  readonly pollMs: number;
  readonly signal: AbortSignal | undefined;
}

export interface Followed {
  handle: FileHandle;
  ino: number;
  /** Where the next unread frame starts. */
  pos: number;
}

export async function followLogfile(ctx: FollowContext, start: Followed): Promise<void> {
  let cur: Followed | null = start;
  let takeUp: 'from-start' | 'differences' = 'from-start';
  try {
    while (await pause(ctx)) {
      if (cur === null) {
        cur = await openFollowed(ctx.path);
        if (cur === null) continue; // between a rename and the creation of the fresh log
        cur.pos = takeUp === 'differences'
          ? await showDifferences(ctx, cur.handle)
          : await readRange(cur.handle, ctx.path, 0, (await cur.handle.stat()).size, (rec) => showIfNew(ctx, rec), ctx.sink);
      }
      const now = await statOrNull(ctx.path);
      if (now === null) continue;
      if (now.ino === cur.ino && now.size >= cur.pos) {
        if (now.size > cur.pos) cur.pos = await readRange(cur.handle, ctx.path, cur.pos, now.size, ctx.show, ctx.sink);
        continue;
      }
      const oldSize = (await cur.handle.stat()).size;
      if (oldSize > cur.pos) await readRange(cur.handle, ctx.path, cur.pos, oldSize, ctx.show, ctx.sink);
      const oldIno = cur.ino;
      await cur.handle.close();
      cur = null;
      const rotated = now.ino !== oldIno && (await statOrNull(toCompressPath(ctx.path)))?.ino === oldIno;
      takeUp = rotated ? 'from-start' : 'differences';
    }
  } finally {
    await cur?.handle.close();
  }
}

async function pause(ctx: FollowContext): Promise<boolean> {
  if (ctx.sink.broken || ctx.signal?.aborted) return false;
  try {
    await sleep(ctx.pollMs, undefined, ctx.signal === undefined ? {} : { signal: ctx.signal });
  } catch {
    return false; // aborted
  }
  return !ctx.sink.broken;
}

async function openFollowed(path: string): Promise<Followed | null> {
  try {
    const handle = await open(path, 'r');
    return { handle, ino: (await handle.stat()).ino, pos: 0 };
  } catch (err) {
    if (isNotFound(err)) return null;
    throw err;
  }
}

async function statOrNull(path: string): Promise<{ ino: number; size: number } | null> {
  try {
    return await stat(path);
  } catch (err) {
    if (isNotFound(err)) return null;
    throw err;
  }
}

/** Shows `rec` unless it restates what is already shown. */
function showIfNew(ctx: FollowContext, rec: LogRecord): void {
  const shown = ctx.shown.get(recordKey(rec));
  if (isRemoval(rec) ? shown === undefined : shown === formatRecord(rec, ctx.format)) return;
  ctx.show(rec);
}

/** Prints how the history now on disk differs from what was shown; returns the read end. */
async function showDifferences(ctx: FollowContext, handle: FileHandle): Promise<number> {
  const state = new Map<string, string>();
  const fold = (rec: LogRecord) => {
    const key = recordKey(rec);
    if (isRemoval(rec)) state.delete(key);
    else state.set(key, formatRecord(rec, ctx.format));
  };
  await readWholeFile(toCompressPath(ctx.path), fold, ctx.sink);
  const end = await readRange(handle, ctx.path, 0, (await handle.stat()).size, fold, ctx.sink);
  for (const [key, line] of state) {
    if (ctx.shown.get(key) !== line) ctx.sink.line(line);
  }
  for (const key of ctx.shown.keys()) {
    if (state.has(key) || key === FORMAT_KEY) continue; // a mark that went is no change of state
    const id = key.slice(1);
    ctx.sink.line(formatRecord(key[0] === 'j' ? { t: 'job.removed', id } : { t: 'rule.removed', id }, ctx.format));
  }
  ctx.shown.clear();
  for (const [key, line] of state) ctx.shown.set(key, line);
  await ctx.sink.flush();
  return end;
}
