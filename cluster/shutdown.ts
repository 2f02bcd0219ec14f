// How the primary stops (tickd(8) SIGNALS); when it stops is cluster/lifecycle.ts's business.
//
// The ordered stop, over the parts that exist (a stop during start-up finds only some):
//   (cluster mode: hand the lead over) -> drain the workers (they stop accepting and answer
//   what they received; HTTP gets 5 s; WORKER_EXIT_GRACE_MS, then SIGKILL) -> stop the tick
//   -> stop the runner child processes (each gets RUNNER_GRACE_MS, then aborts what still
//   runs; those executions stay `triggered` on disk and run again at the next start) -> flush
//   and fsync the log -> flush telemetry (at most 2 s) -> remove the pidfile.
// Workers go first: while they drain, the engine still answers their batches, and only once
// they are gone can nothing new reach the journal that is closed after them. A cluster
// leader is the exception: it stops leading before its workers drain, so that failover does
// not wait for the drain, and what its workers still send is forwarded to the new leader.
//
// The abandoned start-up (a startup error): no drain, as nothing was promised to anyone yet
// that a drain would keep; the workers and the runner children are killed and the log is
// closed.
import { rmSync } from 'node:fs';
import type { Storage } from '../lib/persistence/storage.ts';
import type { Ticker } from '../lib/scheduler/tick.ts';
import { TELEMETRY_FLUSH_MS, type Telemetry } from '../lib/telemetry/wiring.ts';
import type { RunnerProcesses } from './runner-processes.ts';
import type { Supervisor } from './supervisor.ts';
import { WORKER_EXIT_GRACE_MS } from './ipc/timing.ts';

const RUNNER_GRACE_MS = 0;

/** What a stop acts on: each part is filled in once it exists (Lifecycle.own). */
export interface StopParts {
  supervisor?: Supervisor;
  ticker?: Ticker;
  /** The runner child processes (runner-processes.ts). */
  pool?: RunnerProcesses;
  storage?: Storage;
  telemetry?: Telemetry | null;
  /** Set once this process wrote it: a pidfile found there before is not ours to remove. */
  pidfile?: string;
  /** The failure warnings' count of the last second (lib/engine/observers.ts failureLog). */
  failures?: { flush(): void };
}

export async function stopParts(parts: StopParts): Promise<void> {
  // Cluster mode: a leader hands over first, so another node fires and writes at once while
  // this one's workers drain (their commands are forwarded to the new leader meanwhile).
  await parts.storage?.handOver?.();
  await parts.supervisor?.drain(WORKER_EXIT_GRACE_MS);
  parts.ticker?.stop();
  await parts.pool?.stop(RUNNER_GRACE_MS);
  parts.failures?.flush();
  await parts.storage?.close();
  // Last, so the final counts are in it; bounded, so a dead collector cannot hold the exit.
  await parts.telemetry?.shutdown(TELEMETRY_FLUSH_MS.primary);
  removePidfile(parts);
}

export async function abandonParts(parts: StopParts): Promise<void> {
  parts.supervisor?.killAll();
  parts.pool?.kill();
  await parts.storage?.close();
}

export function removePidfile(parts: StopParts): void {
  if (parts.pidfile !== undefined) rmSync(parts.pidfile, { force: true });
}
