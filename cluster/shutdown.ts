// How the primary stops (tickd(8) SIGNALS); when it stops is cluster/lifecycle.ts's business.
//
// The ordered stop, over the parts that exist (a stop during start-up finds only some):
//   hold the firing (nothing more fires; the tick goes on applying results) -> (cluster mode:
//   hand the lead over) -> at the same time: drain the workers (they stop accepting and answer
//   what they received; HTTP gets 5 s; WORKER_EXIT_GRACE_MS, then SIGKILL) and stop the
//   runner child processes (what runs gets RUNNER_GRACE_MS to finish, then is aborted; those
//   executions stay `triggered` on disk and run again at the next start) -> stop the tick ->
//   (cluster mode: the results of what finished go to the leader, at most 2 s) ->
//   settle: apply the results reported since its last step and wait until they are durable ->
//   flush and fsync the log -> flush telemetry (at most 2 s) -> remove the pidfile.
// The firing is held first: a job that came due during the stop would only start to be
// aborted, and run again after the restart; it stays `planned` and fires once, at the next
// start. What runs gets as long as an HTTP request does, and at the same time, so a stop is
// no longer for it: a webhook or a short command that finishes within it is recorded, not
// run a second time after the restart. The tick applies results until the children are
// gone, and the settle applies the last of them.
// Runners may stop alongside the drain because only the tick hands out executions, and it
// fires nothing once held; commands the workers still send are answered by the engine.
// The workers are gone before the journal closes: while they drain, the engine still answers
// their batches, and only once they are gone can nothing new reach the journal. A cluster
// leader is the exception: it stops leading before its workers drain, so that failover does
// not wait for the drain, and what its workers still send is forwarded to the new leader.
//
// The abandoned start-up (a startup error): no drain, as nothing was promised to anyone yet
// that a drain would keep; the workers and the runner children are killed and the log is
// closed.
import { rmSync } from 'node:fs';
import type { Storage } from '../lib/persistence/storage.ts';
import type { Ticker } from '../lib/engine/tick.ts';
import { TELEMETRY_FLUSH_MS, type Telemetry } from '../lib/telemetry/wiring.ts';
import type { RunnerProcesses } from './runner-processes.ts';
import type { Supervisor } from './supervisor.ts';
import { WORKER_DRAIN_MS, WORKER_EXIT_GRACE_MS } from './ipc/timing.ts';

/** As long as the workers give an HTTP request in flight (WORKER_DRAIN_MS). */
export const RUNNER_GRACE_MS = WORKER_DRAIN_MS;

/** What a stop acts on: each part is filled in once it exists (Lifecycle.own). */
export interface StopParts {
  /** What fires due jobs and records their results (lib/engine/engine.ts). */
  engine?: { holdFiring(): void; settle(): Promise<void> };
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
  /** Cluster mode: this node's side of execution placement (lib/placement/placement.ts). */
  placement?: { stopTaking(): void; close(ms: number): Promise<void> };
}

/** How long a stopping cluster node may take to hand its last results to the leader. */
const RESULTS_HANDOVER_MS = 2_000;

export async function stopParts(parts: StopParts): Promise<void> {
  parts.engine?.holdFiring();
  // Cluster mode: a leader hands over first, so another node fires and writes at once while
  // this one's workers drain (their commands are forwarded to the new leader meanwhile).
  await parts.storage?.handOver?.();
  parts.placement?.stopTaking(); // the leader places elsewhere what it would have sent here
  await Promise.all([parts.supervisor?.drain(WORKER_EXIT_GRACE_MS), parts.pool?.stop(RUNNER_GRACE_MS)]);
  await parts.placement?.close(RESULTS_HANDOVER_MS); // what finished in the grace reaches the leader
  parts.ticker?.stop();
  await parts.engine?.settle();
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
