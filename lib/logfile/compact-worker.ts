// Worker-thread entry of a compaction: folds `src` into `dst` off the primary's event loop
// and reports one message, {ok: true, result} or {ok: false, message}. See compact.ts.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { foldLogfile } from './fold.ts';
import type { FoldResult } from './fold.ts';

export interface FoldJob {
  readonly src: string;
  readonly dst: string;
}
export type FoldReply = { readonly ok: true; readonly result: FoldResult } | { readonly ok: false; readonly message: string };

/**
 * Lowers this thread's scheduling priority (Linux: a thread is addressable by its TID), so
 * that on a small machine the fold yields the CPU to the primary's event loop and the tick.
 * Best effort: elsewhere, or if refused, the fold runs at normal priority.
 */
function yieldToThePrimary(): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, 10);
  } catch {
    // not Linux, or not allowed: nothing to do
  }
}

yieldToThePrimary();
const job = workerData as FoldJob;
const port = parentPort;
if (port !== null) {
  foldLogfile(job.src, job.dst).then(
    (result) => port.postMessage({ ok: true, result } satisfies FoldReply),
    (err: unknown) => port.postMessage({ ok: false, message: (err as Error)?.message ?? String(err) } satisfies FoldReply),
  );
}
