// The IPC contract between the primary and the connection workers: the ONLY crossing.
// String-tagged unions dispatched with exhaustive switches; plain data only (the channel
// uses serialization 'advanced', so bigint timestamps cross intact).
//
// Sequence: primary forks a worker -> 'init' -> worker binds TCP then HTTP -> 'listening'
// (or 'listen-failed': startup error). Then the worker sends 'batch' messages (every command
// read in one event-loop turn, each tagged with a per-worker seq; SETs packed as bytes:
// batch-codec.ts) and the primary answers
// with 'replies' (seqs it has finished, coalesced per turn). 'readiness' tells the worker
// what GET /ready answers: 'ready' once the daemon is ready (after every worker reported
// 'listening'; 503 before, while commands are already answered), 'stopping' as soon as a
// graceful stop begins (503 for good; in cluster mode a leader hands over before its workers
// drain, and they serve meanwhile). A worker forked later gets the current one right after
// its 'init'. On shutdown the primary sends 'drain' (which means 'stopping' too); the worker
// stops accepting, answers what it has received, and exits.
import type { Command, Reply } from '../../lib/domain/command.ts';
import type { Config } from '../../lib/config/schema.ts';
import type { TokenEntry } from '../../lib/config/tokens.ts';
import type { LogFormat } from '../../lib/log-format.ts';
import type { WireBatch } from './batch-codec.ts';

export interface WorkerInit {
  readonly config: Config;
  /** null when no auth_file is configured. */
  readonly tokens: readonly TokenEntry[] | null;
  /** PEM text read and checked by the primary at startup. */
  readonly tls: { readonly cert: string; readonly key: string } | null;
  readonly version: string;
  /** --log-format: the worker's records look like the primary's. */
  readonly logFormat: LogFormat;
  /** Started with --cluster: the HTTP interface serves GET /cluster (a node alone has no view to give). */
  readonly cluster: boolean;
}

export type ToWorker =
  | { readonly t: 'init'; readonly init: WorkerInit }
  | { readonly t: 'replies'; readonly seqs: number[]; readonly replies: Reply[] }
  | { readonly t: 'readiness'; readonly readiness: 'ready' | 'stopping' }
  | { readonly t: 'drain' };

export type ToPrimary =
  | { readonly t: 'listening'; readonly tcp: string; readonly http: string | null }
  | { readonly t: 'listen-failed'; readonly message: string }
  | ({ readonly t: 'batch' } & WireBatch)
  | { readonly t: 'connections'; readonly count: number };
