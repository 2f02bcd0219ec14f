// What the placement exchanges carry (wire.ts), and the shape checks they are read through: a
// sealed message comes from a node of the cluster, but maybe of another tickd version, so
// whatever is not the shape this code knows is dropped, never half-used.
import type { Attempt } from '../domain/attempt.ts';
import type { Execution } from '../runner/execution.ts';

/** A finished attempt on its way to the leader. */
export interface PlacedResult {
  readonly jobId: string;
  readonly attempt: string;
  readonly success: boolean;
  readonly record: Attempt;
}

/** An attempt a node runs, or ran and still holds the result of (a census answer). */
export interface HeldAttempt {
  readonly jobId: string;
  readonly attempt: string;
  readonly execution: bigint;
  readonly attemptNo: number;
}

export type ExecRequest =
  | { readonly op: 'run'; readonly execs: readonly Execution[] }
  | { readonly op: 'census' };

export interface ResultBatch {
  readonly node: string;
  readonly results: readonly PlacedResult[];
}

const ATTEMPT = /^[0-9a-f]{32}$/;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function isExecution(v: unknown): v is Execution {
  return isObject(v) && typeof v['attempt'] === 'string' && ATTEMPT.test(v['attempt']) && typeof v['jobId'] === 'string'
    && typeof v['execution'] === 'bigint' && isObject(v['runner']) && typeof v['runner']['type'] === 'string'
    && (v['attemptNo'] === undefined || Number.isSafeInteger(v['attemptNo']));
}

function isResult(v: unknown): v is PlacedResult {
  return isObject(v) && typeof v['jobId'] === 'string' && typeof v['attempt'] === 'string' && ATTEMPT.test(v['attempt'])
    && typeof v['success'] === 'boolean' && isObject(v['record']) && isObject(v['record']['outcome'])
    && typeof v['record']['startedNs'] === 'bigint';
}

function isHeld(v: unknown): v is HeldAttempt {
  return isObject(v) && typeof v['jobId'] === 'string' && typeof v['attempt'] === 'string' && ATTEMPT.test(v['attempt'])
    && typeof v['execution'] === 'bigint' && Number.isSafeInteger(v['attemptNo']);
}

export function readExecRequest(v: unknown): ExecRequest | null {
  if (!isObject(v)) return null;
  if (v['op'] === 'census') return { op: 'census' };
  if (v['op'] !== 'run' || !Array.isArray(v['execs'])) return null;
  return { op: 'run', execs: v['execs'].filter(isExecution) };
}

export function readResultBatch(v: unknown): ResultBatch | null {
  if (!isObject(v) || typeof v['node'] !== 'string' || !Array.isArray(v['results'])) return null;
  return { node: v['node'], results: v['results'].filter(isResult) };
}

/** A census answer's attempts; null when it is not one. */
export function readHeld(v: unknown): HeldAttempt[] | null {
  return isObject(v) && Array.isArray(v['held']) ? v['held'].filter(isHeld) : null;
}

/** The attempts an answer says were taken; null when it is not such an answer. */
export function readTaken(v: unknown): string[] | null {
  return isObject(v) && Array.isArray(v['taken']) ? v['taken'].filter((a): a is string => typeof a === 'string') : null;
}

/** What a census answer says of an attempt. */
export function heldOf(exec: Execution): HeldAttempt {
  return { jobId: exec.jobId, attempt: exec.attempt, execution: exec.execution, attemptNo: exec.attemptNo ?? 1 };
}
