// Timing the primary and its workers agree on for a stop ('drain', messages.ts): the worker
// lets its connections finish for WORKER_DRAIN_MS (HTTP in-flight requests get 5 s:
// tickd-protocol(7) HTTP INTERFACE), then flushes its telemetry for at most its flush bound;
// the primary kills a worker still there after both, and no sooner.
import { TELEMETRY_FLUSH_MS } from '../../lib/telemetry/wiring.ts';

export const WORKER_DRAIN_MS = 5000;
export const WORKER_EXIT_GRACE_MS = WORKER_DRAIN_MS + TELEMETRY_FLUSH_MS.worker;
