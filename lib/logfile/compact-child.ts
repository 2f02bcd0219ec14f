// Entry of the compaction child process (fold-runner.ts). For each FoldJob from the primary:
// create the output exclusively, fold the source into it, sync, and answer one FoldReply.
// It lives only as long as its primary: a lost IPC channel ends it at once.
import { readdirSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { setPriority } from 'node:os';
import { foldInto } from './fold.ts';
import type { FoldJob, FoldReply } from './fold-runner.ts';
import { LOGFILE_MODE } from './fsutil.ts';

/**
 * Nice 19 for every thread of this process (Linux addresses a thread by its TID). Threads
 * started later inherit it from the main thread. Best effort: elsewhere, nothing happens.
 */
function lowestPriority(): void {
  try {
    for (const tid of readdirSync('/proc/self/task')) setPriority(Number(tid), 19);
  } catch {
    // not Linux
  }
}

async function fold(job: FoldJob): Promise<FoldReply> {
  try {
    // 'wx': never into a file someone else made (a leftover, or another process's output).
    const output = await open(job.dst, 'wx', LOGFILE_MODE);
    try {
      return { ok: true, result: await foldInto(job.src, output) };
    } finally {
      await output.close();
    }
  } catch (err) {
    return { ok: false, message: (err as Error)?.message ?? String(err) };
  }
}

const collect = (globalThis as { gc?: () => void }).gc ?? ((): void => {});

lowestPriority();
// SIGKILL rather than exit(): exit() joins the libuv pool, which waits for a read in
// progress, and the point is to stop at once.
process.on('disconnect', () => process.kill(process.pid, 'SIGKILL'));
let queue = Promise.resolve();
process.on('message', (job: FoldJob) => {
  queue = queue.then(async () => {
    const reply = await fold(job);
    process.send?.(reply);
    collect(); // the fold's map and buffers are garbage now: give the memory back while idle
  });
});
