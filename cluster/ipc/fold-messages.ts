// The IPC contract between the primary and its compaction child (cluster/fold-process.ts ->
// cluster/fold-child.ts): string-tagged, plain data, one fold at a time.
//
// Sequence: the primary starts the child -> the child sends 'ready' (it runs: chrt, if used,
// let it start) -> for each 'fold' the child answers exactly one 'folded' or 'fold-failed';
// for each 'checkpoint' (cluster mode: the cluster's compaction) exactly one 'checkpointed'
// or 'checkpoint-failed'. The child ends as soon as its channel closes.
//
// Every message carries the child's generation (`gen`, its last argument): successive
// children started by the spawner share one channel (cluster/fold-spawner.ts), so a job
// left unread by a child that died, or an answer a dead child wrote, is still in it when the
// next child runs. Each side drops what carries another generation than the child's.
import type { ClusterOptions } from '../../lib/cli.ts';
import type { CheckpointMade } from '../../lib/jetstream/checkpoint-make.ts';
import type { FoldResult } from '../../lib/logfile/fold.ts';

/** A job, before the primary addresses it to a child. */
export type FoldJob =
  | { readonly t: 'fold'; readonly src: string; readonly dst: string }
  | { readonly t: 'checkpoint'; readonly cluster: ClusterOptions; readonly whole: boolean };

export type ToFoldChild = FoldJob & { readonly gen: number };

/** An answer, before the child stamps its generation on it. */
export type FoldAnswer =
  | { readonly t: 'ready' }
  | { readonly t: 'folded'; readonly result: FoldResult }
  | { readonly t: 'fold-failed'; readonly message: string }
  /** null: nothing new since the last checkpoint, or another node's won. */
  | { readonly t: 'checkpointed'; readonly made: CheckpointMade | null }
  | { readonly t: 'checkpoint-failed'; readonly message: string };

export type FromFoldChild = FoldAnswer & { readonly gen: number };
