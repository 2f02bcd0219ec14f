// The primary's metric instruments (tickd.toml(5) [telemetry]; names carry the `tickd`
// prefix) and the small facade the primary calls. Counting is a few additions on the
// engine's synchronous path; the gauges are read only when the metric reader collects.
//
//   tickd.jobs.scheduled          counter            {job}         successful SET (TCP or HTTP)
//   tickd.jobs.removed            counter            {job}         successful REMOVE
//   tickd.jobs.executed           counter            {job}         finished executions, and due
//                                                                  jobs no rule matched; by
//                                                                  tickd.outcome = executed|failed
//   tickd.execution.duration_ms   histogram          ms            runner durations, by outcome
//   tickd.connections.active      observable gauge   {connection}  open TCP connections, all workers
//   tickd.rules.active            observable gauge   {rule}        rules stored
//   tickd.persistence.compactions observable counter {compaction}  completed logfile compactions
//
// Cluster mode only (nothing is exported for them in single-node mode: no role source is
// given and nobody takes over, and the SDK exports no instrument that has no data point):
//
//   tickd.cluster.role            observable gauge   1             1 leader, 0 follower; none
//                                                                  while the role is undecided
//   tickd.cluster.failovers       counter            {failover}    takeovers: this node became
//                                                                  leader after being a follower
import type { Attributes, Meter } from '@opentelemetry/api';
import type { Command, Reply } from '../domain/command.ts';
import type { Job } from '../domain/job.ts';
import type { EngineObserver } from '../engine/engine.ts';

export const METRIC_NAMES = [
  'tickd.jobs.scheduled',
  'tickd.jobs.executed',
  'tickd.jobs.removed',
  'tickd.execution.duration_ms',
  'tickd.connections.active',
  'tickd.rules.active',
  'tickd.persistence.compactions',
] as const;

export const CLUSTER_METRIC_NAMES = ['tickd.cluster.role', 'tickd.cluster.failovers'] as const;

export const ATTR_OUTCOME = 'tickd.outcome';

/** Runner durations span milliseconds (HTTP call) to minutes (shell job at its timeout). */
const DURATION_BUCKETS_MS = [1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 30_000, 60_000, 300_000];

export interface InstrumentSources {
  readonly connections: () => number;
  readonly rules: () => number;
  /** Completed compactions since start (monotonic). */
  readonly compactions: () => number;
  /** This node's role in cluster mode (null while undecided); absent in single-node mode. */
  readonly role?: () => 'leader' | 'follower' | null;
}

export interface JobInstruments {
  scheduled(): void;
  removed(): void;
  /** One finished execution: counted, and its duration recorded. */
  executed(success: boolean, durationMs: number): void;
  /** A due job no rule matched: it fails without running. */
  notRunnable(): void;
  /** This node became leader after having been a follower (cluster mode). */
  tookOver(): void;
}

// Shared attribute objects: no allocation per recording.
const EXECUTED: Attributes = Object.freeze({ [ATTR_OUTCOME]: 'executed' });
const FAILED: Attributes = Object.freeze({ [ATTR_OUTCOME]: 'failed' });

export function createInstruments(meter: Meter, sources: InstrumentSources): JobInstruments {
  const scheduled = meter.createCounter('tickd.jobs.scheduled', { unit: '{job}', description: 'Jobs set (created or replaced).' });
  const executed = meter.createCounter('tickd.jobs.executed', { unit: '{job}', description: 'Job executions finished, by outcome.' });
  const removed = meter.createCounter('tickd.jobs.removed', { unit: '{job}', description: 'Jobs removed.' });
  const duration = meter.createHistogram('tickd.execution.duration_ms', {
    unit: 'ms',
    description: 'Wall time of one runner execution.',
    advice: { explicitBucketBoundaries: DURATION_BUCKETS_MS },
  });
  meter.createObservableGauge('tickd.connections.active', { unit: '{connection}', description: 'Open TCP connections across all workers.' })
    .addCallback((result) => result.observe(sources.connections()));
  meter.createObservableGauge('tickd.rules.active', { unit: '{rule}', description: 'Rules stored.' })
    .addCallback((result) => result.observe(sources.rules()));
  meter.createObservableCounter('tickd.persistence.compactions', { unit: '{compaction}', description: 'Logfile compactions completed.' })
    .addCallback((result) => result.observe(sources.compactions()));
  const failovers = meter.createCounter('tickd.cluster.failovers', { unit: '{failover}', description: 'Times this node took over as leader after having been a follower.' });
  const role = sources.role;
  if (role !== undefined) {
    meter.createObservableGauge('tickd.cluster.role', { unit: '1', description: 'This node\'s cluster role: 1 leader, 0 follower.' })
      .addCallback((result) => {
        const now = role();
        if (now !== null) result.observe(now === 'leader' ? 1 : 0);
      });
  }

  return {
    scheduled: () => scheduled.add(1),
    removed: () => removed.add(1),
    executed: (success, durationMs) => {
      const attrs = success ? EXECUTED : FAILED;
      executed.add(1, attrs);
      if (Number.isFinite(durationMs) && durationMs >= 0) duration.record(durationMs, attrs);
    },
    notRunnable: () => executed.add(1, FAILED),
    tookOver: () => failovers.add(1),
  };
}

/** The engine's observer feeding the instruments (executions come from the runner pool). */
export function engineObserver(instruments: JobInstruments): EngineObserver {
  return {
    commandApplied(cmd: Command, reply: Reply): void {
      if (!reply.ok) return;
      if (cmd.op === 'job.set') instruments.scheduled();
      else if (cmd.op === 'job.remove') instruments.removed();
    },
    fired(_job: Job, outcome: 'triggered' | 'no-rule', _nowNs: bigint): void {
      if (outcome === 'no-rule') instruments.notRunnable();
    },
    finished(): void {},
  };
}
