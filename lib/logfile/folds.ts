// Where a compaction's fold runs, as the compactor sees it (the seam). The fold itself is
// lib/logfile/fold.ts; the process that runs it at the lowest CPU priority is a process role
// of its own (cluster/fold-process.ts), handed to openLogfile by the primary.
import type { FoldResult } from './fold.ts';

/** Runs a fold of `src` into the new file `dst`; cancel() abandons it (its promise then rejects). */
export type FoldRunner = (src: string, dst: string) => { readonly result: Promise<FoldResult>; cancel(): void };

/** Something that runs folds (a process spawned for them: cluster/fold-process.ts), closed at the end. */
export interface Folds {
  readonly run: FoldRunner;
  close(): Promise<void>;
}
