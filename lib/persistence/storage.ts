// What the primary holds of its persistence, whichever kind was opened (open.ts): memory, the
// logfile, or in cluster mode the JetStream stream (cluster-storage.ts).
import type { CompressionState } from '../domain/stat.ts';
import type { Journal } from '../engine/journal.ts';
import type { ClusterNode } from '../leadership/node.ts';

export interface Storage {
  /** What STAT `persistence` says: the configured mode, or `jetstream` in cluster mode. */
  readonly kind: 'logfile' | 'memory' | 'jetstream';
  readonly path: string | null;
  readonly journal: Journal | null;
  readonly compression: () => CompressionState;
  readonly compactions: () => number;
  startCompaction(): void;
  /** Stops compaction, then writes and fsyncs what is pending. */
  close(): Promise<void>;
  /** Cluster mode: this node's role, its copy of the log, and where its commands go. */
  readonly node?: ClusterNode;
  /** Cluster mode, first step of a graceful stop: stop leading (and competing) now. */
  handOver?(): Promise<void>;
}
