// Compaction child role (spawned by cluster/fold-process.ts; messages in
// cluster/ipc/fold-messages.ts). For each 'fold' from the primary (one at a time): fold the
// source into a new output (lib/logfile/fold.ts) and answer 'folded' or 'fold-failed'. In
// cluster mode, for each 'checkpoint': make the cluster's checkpoint
// (lib/jetstream/checkpoint-make.ts) and answer 'checkpointed' or 'checkpoint-failed'.
// It lives only as long as its primary: a lost IPC channel ends it at once. The primary
// starts it for a job and retires it when it has been idle a while (cluster/fold-process.ts).
// Its one argument is its generation: it takes only jobs addressed to it and stamps it on
// every answer, because the channel may be shared with the children before and after it
// (cluster/fold-spawner.ts).
import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';
import type { ClusterOptions } from '../lib/cli.ts';
import { makeCheckpoint } from '../lib/jetstream/checkpoint-make.ts';
import { foldLogfile } from '../lib/logfile/fold.ts';
import type { FoldAnswer, ToFoldChild } from './ipc/fold-messages.ts';
import { errorText } from '../lib/errors.ts';
import { saveCompileCache } from './compile-cache.ts';

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

async function fold(src: string, dst: string): Promise<FoldAnswer> {
  try {
    return { t: 'folded', result: await foldLogfile(src, dst) };
  } catch (err) {
    return { t: 'fold-failed', message: errorText(err) };
  }
}

async function checkpoint(cluster: ClusterOptions, whole: boolean): Promise<FoldAnswer> {
  try {
    return { t: 'checkpointed', made: await makeCheckpoint(cluster, whole) };
  } catch (err) {
    return { t: 'checkpoint-failed', message: errorText(err) };
  }
}

const GEN = Number(process.argv[2]);

function send(msg: FoldAnswer): void {
  // A failed send means the primary is gone, and 'disconnect' ends this process.
  process.send?.({ ...msg, gen: GEN }, undefined, undefined, () => {});
}

const collect = (globalThis as { gc?: () => void }).gc ?? ((): void => {});

lowestPriority();
// SIGKILL rather than exit(): exit() joins the libuv pool, which waits for a read in
// progress, and the point is to stop at once.
process.on('disconnect', () => process.kill(process.pid, 'SIGKILL'));
send({ t: 'ready' }); // chrt, if any, let us start
saveCompileCache();
process.on('message', async (msg: ToFoldChild) => {
  if (msg.gen !== GEN) return; // sent to an earlier child, which died before reading it
  switch (msg.t) {
    case 'fold':
      send(await fold(msg.src, msg.dst));
      collect(); // the fold's map and buffers are garbage now: give the memory back while idle
      return;
    case 'checkpoint':
      send(await checkpoint(msg.cluster, msg.whole));
      collect();
      return;
    default: {
      const never: never = msg;
      throw new Error(`unknown message ${String((never as { t: unknown }).t)}`);
    }
  }
});
