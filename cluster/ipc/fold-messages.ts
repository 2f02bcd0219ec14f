// The IPC contract between the primary and its compaction child (cluster/fold-process.ts ->
// cluster/fold-child.ts): string-tagged, plain data, one fold at a time.
//
// Sequence: the primary spawns the child -> the child sends 'ready' (it runs: chrt, if used,
// let it start) -> for each 'fold' the child answers exactly one 'folded' or 'fold-failed'.
// The child ends as soon as its channel closes.
import type { FoldResult } from '../../lib/logfile/fold.ts';

export type ToFoldChild = { readonly t: 'fold'; readonly src: string; readonly dst: string };

export type FromFoldChild =
  | { readonly t: 'ready' }
  | { readonly t: 'folded'; readonly result: FoldResult }
  | { readonly t: 'fold-failed'; readonly message: string };
