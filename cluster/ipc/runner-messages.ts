// The IPC contract between the primary and its runner child processes (cluster/runner-link.ts
// -> cluster/runner-child.ts): the spec's execution request and execution response
// (doc/execution.md "Attempts"). String-tagged, plain data, serialization 'advanced' (bigint
// nanoseconds cross intact).
//
// Sequence: the primary forks a child -> 'init' -> any number of 'execute' batches (every
// request the primary dispatched in one event-loop turn, at most MAX_BATCH) -> 'stop' once,
// at the daemon's graceful stop. The child answers with 'progress' batches (every start and
// every response of one of its turns); a request's start is never sent after its response.
// After 'stop' the child reports what finishes within the grace period as usual, then sends
// 'stopped' with the attempts it gave up on, and exits. It also exits as soon as its channel
// closes (the primary is gone), aborting what still runs. A child holding no request at the
// stop is killed instead: there is nothing to wait for. 'prepare' may come at any time after
// 'init': the next due job's runner (the primary's lookahead), so that the child has what it
// needs ready (an http connection); it is answered by nothing. 'load' may come at any time
// after 'init': the network runner kinds some rule now uses, whose modules the child loads
// (and warms) before a job of the kind comes due; answered by nothing.
import type { AttemptOutcome } from '../../lib/domain/attempt.ts';
import type { LogLevel } from '../../lib/log.ts';
import type { LogFormat } from '../../lib/log-format.ts';
import type { RunnerSpec } from '../../lib/domain/runner-spec.ts';
import type { NetworkKind } from '../../lib/domain/runner-spec.ts';

export interface RunnerInit {
  /** `[shell] path` and `[shell] args`. */
  readonly shellPath: string;
  readonly shellArgs: readonly string[];
  /** The network runners' connect/read/socket timeout (runnerTimeoutMs()). */
  readonly timeoutMs: number;
  /** The child's own bound; the primary never has more than --max-inflight in flight in all. */
  readonly maxInflight: number;
  readonly logLevel: LogLevel;
  readonly logFormat: LogFormat;
  /** The scheduler slice the child asks for its main thread (--tick-slice; 0: the default). */
  readonly sliceUs: number;
  /** The network runner kinds some rule uses: their modules are loaded at the start. */
  readonly kinds: readonly NetworkKind[];
}

/** The spec's execution request, plus the job's execution time (the http body, the process environment). */
export interface ExecutionRequest {
  /** 128-bit attempt id, 32 lowercase hex characters. */
  readonly attempt: string;
  readonly jobId: string;
  readonly execution: bigint;
  readonly runner: RunnerSpec;
}

/** The spec's execution response, plus the attempt's report (lib/runner/pool.ts RunReport). */
export interface ExecutionResponse {
  readonly attempt: string;
  readonly success: boolean;
  /** Wall time the runner started, epoch ns. */
  readonly startedNs: bigint;
  /** How long it ran, monotonic ns. */
  readonly durationNs: bigint;
  readonly outcome: AttemptOutcome;
}

/** A runner started (parallel arrays: one allocation per batch, not per start). */
export interface Starts {
  readonly attempts: string[];
  /** Wall time each started, epoch ns. */
  readonly startedNs: bigint[];
}

export type ToRunnerChild =
  | { readonly t: 'init'; readonly init: RunnerInit }
  | { readonly t: 'execute'; readonly requests: ExecutionRequest[] }
  /** The next due job's runner (lib/engine/lookahead.ts) and its due time to be awake at, epoch ns, or null. */
  | { readonly t: 'prepare'; readonly runner: RunnerSpec; readonly awakeNs: bigint | null }
  /** Network runner kinds a rule now uses (their modules are loaded, once). */
  | { readonly t: 'load'; readonly kinds: readonly NetworkKind[] }
  | { readonly t: 'stop'; readonly graceMs: number };

export type FromRunnerChild =
  | { readonly t: 'progress'; readonly started: Starts; readonly responses: ExecutionResponse[] }
  /** After 'stop': the attempts still running at the end of the grace period, aborted. */
  | { readonly t: 'stopped'; readonly abandoned: ExecutionResponse[] };
