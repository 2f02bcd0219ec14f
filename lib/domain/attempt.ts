// The last attempt of a job (doc/execution.md "The attempt record"; GET /jobs/{id} shows it
// as `last_attempt`, tickd-protocol(7) HTTP INTERFACE): when its runner started, how late,
// how long it ran, and its outcome in the runner's own terms. Plain data: it crosses IPC and
// the cluster's forwarding inside a 'job' reply.
//
// Invariants:
// - An outcome says by itself whether the attempt succeeded (outcomeSucceeded): exit status
//   0, an HTTP 2xx status, or a broker's acknowledgement. Nothing else is a success.
// - Every text an outcome carries is at most MAX_OUTCOME_TEXT_BYTES of UTF-8: the stderr tail
//   keeps the end of the output, an error message its beginning. So one record holds at most
//   that much text whatever the runner met.
// - Nothing here carries a credential: error texts come from the runners already scrubbed
//   (lib/runner/redact.ts), and no URL or DSN is part of a record.
import type { RunnerType } from './runner-spec.ts';

/** The most text (UTF-8 bytes) an outcome keeps: the stderr tail, or an error message. */
export const MAX_OUTCOME_TEXT_BYTES = 512;

export type AttemptOutcome =
  /** shell, direct, awf: the process exited; `stderr` is the tail of what it wrote there. */
  | { readonly kind: 'exit'; readonly status: number; readonly stderr: string }
  /** shell, direct, awf: the process was killed by a signal. */
  | { readonly kind: 'signal'; readonly signal: string; readonly stderr: string }
  /** shell, direct, awf: the process could not be started (ENOENT, EACCES, EMFILE...). */
  | { readonly kind: 'spawn_error'; readonly error: string }
  /**
   * http: the response's status (success only for 2xx; redirects are not followed), and on a 429
   * or 503 the wait its Retry-After header asked for, in ms (absent without a readable one).
   */
  | { readonly kind: 'http_response'; readonly status: number; readonly retryAfterMs?: number }
  /** http: no response: refused, reset, DNS, TLS, a connect or read timeout. */
  | { readonly kind: 'network_error'; readonly error: string }
  /** amqp: the broker confirmed the message; redis: the command was answered without error. */
  | { readonly kind: 'delivered' }
  /** amqp, redis: the connection, the broker's refusal or error reply, or no answer in time. */
  | { readonly kind: 'broker_error'; readonly error: string }
  /** Any kind: a runner that could not run at all (a URL or DSN an old logfile stored, a bug), or whose runner child died under it. */
  | { readonly kind: 'runner_error'; readonly error: string }
  /** A due job no rule matched: it failed without running. */
  | { readonly kind: 'no_rule' }
  /**
   * Cluster mode: no live node had every tag its rule requires (`on`, as the rule has it) within
   * the placement bound, so the attempt failed without running.
   */
  | { readonly kind: 'no_node'; readonly on: readonly string[] }
  /** The daemon stopped while the runner ran: the job stays `triggered` and runs again. */
  | { readonly kind: 'aborted' };

export type OutcomeKind = AttemptOutcome['kind'];

export const OUTCOME_KINDS: readonly OutcomeKind[] = [
  'exit', 'signal', 'spawn_error', 'http_response', 'network_error', 'delivered', 'broker_error', 'runner_error', 'no_rule', 'no_node', 'aborted',
];

export interface Attempt {
  /** The rule whose runner ran; null when no rule matched. */
  readonly rule: string | null;
  /** That runner's kind; null when no rule matched. */
  readonly runner: RunnerType | null;
  /** Wall time the runner started (a job no rule matched: when it fired), epoch nanoseconds. */
  readonly startedNs: bigint;
  /** startedNs minus the job's execution time (negative only if the wall clock stepped back). */
  readonly latenessNs: bigint;
  /** How long the runner ran, nanoseconds (0 when nothing ran). */
  readonly durationNs: bigint;
  /** The attempt's number (issue 38), 1 for the first run; absent: 1. */
  readonly number?: number;
  /** How long it waited for its rule's concurrency or rate limit before it started, ns; absent: 0. Not part of latenessNs. */
  readonly heldNs?: bigint;
  /** Cluster mode: the node that ran it; absent in single-node mode, and when nothing ran (no_rule, no_node). */
  readonly node?: string;
  readonly outcome: AttemptOutcome;
}

export function outcomeSucceeded(o: AttemptOutcome): boolean {
  switch (o.kind) {
    case 'exit': return o.status === 0;
    case 'http_response': return o.status >= 200 && o.status <= 299;
    case 'delivered': return true;
    default: return false;
  }
}

/** One line for people (the warn log's `outcome`, the record's `summary`). */
export function describeOutcome(o: AttemptOutcome): string {
  switch (o.kind) {
    case 'exit': return `exit status ${o.status}`;
    case 'signal': return `killed by signal ${o.signal}`;
    case 'spawn_error': return `could not start: ${o.error}`;
    case 'http_response': return `HTTP status ${o.status}`;
    case 'network_error': return `network error: ${o.error}`;
    case 'delivered': return 'delivered';
    case 'broker_error': return `broker error: ${o.error}`;
    case 'runner_error': return `runner error: ${o.error}`;
    case 'no_rule': return 'no matching rule';
    case 'aborted': return 'aborted at shutdown';
    case 'no_node': return `no live node has the tags ${o.on.join(', ')}`;
    default: {
      const never: never = o;
      return never;
    }
  }
}

/** The first `max` bytes of `text` as UTF-8, cut at a character boundary. */
export function clipHead(text: string, max = MAX_OUTCOME_TEXT_BYTES): string {
  if (text.length * 3 <= max) return text; // even all 3-byte characters fit
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= max) return text;
  let end = max;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--; // not inside a character
  return bytes.subarray(0, end).toString('utf8');
}

/** The last `max` bytes of `bytes` as text, starting at a character boundary. */
export function clipTail(bytes: Uint8Array, max = MAX_OUTCOME_TEXT_BYTES): string {
  let start = Math.max(0, bytes.length - max);
  while (start < bytes.length && (bytes[start]! & 0xc0) === 0x80) start++;
  return Buffer.from(bytes.buffer, bytes.byteOffset + start, bytes.length - start).toString('utf8');
}
