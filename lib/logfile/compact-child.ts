// Entry of the compaction child process (fold-runner.ts). For each FoldJob from the primary
// (one at a time): fold the source into a new output, and answer one FoldReply.
// It lives only as long as its primary: a lost IPC channel ends it at once.
import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';
import { foldLogfile } from './fold.ts';
import type { FoldJob, FoldReady, FoldReply } from './fold-runner.ts';

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
    return { ok: true, result: await foldLogfile(job.src, job.dst) };
  } catch (err) {
    return { ok: false, message: (err as Error)?.message ?? String(err) };
  }
}

const collect = (globalThis as { gc?: () => void }).gc ?? ((): void => {});

lowestPriority();
// SIGKILL rather than exit(): exit() joins the libuv pool, which waits for a read in
// progress, and the point is to stop at once.
process.on('disconnect', () => process.kill(process.pid, 'SIGKILL'));
process.send?.({ ready: true } satisfies FoldReady); // chrt, if any, let us start
process.on('message', async (job: FoldJob) => {
  process.send?.(await fold(job));
  collect(); // the fold's map and buffers are garbage now: give the memory back while idle
});
