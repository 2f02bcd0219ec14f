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
// Beside the spec's seven (doc/execution.md "The attempt record" has the terms):
//
//   tickd.execution.lateness_ms   histogram          ms            how late each runner started
//                                                                  (start - the job's execution
//                                                                  time: its firing plus any wait
//                                                                  for a slot), and each due job
//                                                                  no rule matched (its firing)
//   tickd.execution.outcomes      counter            {execution}   the executions of
//                                                                  tickd.jobs.executed, by
//                                                                  tickd.runner.kind (shell ...
//                                                                  redis, none: no rule),
//                                                                  tickd.runner.outcome (exit,
//                                                                  http_response, ..., no_rule)
//                                                                  and tickd.outcome
//   tickd.tick.turn_ms            histogram          ms            each event-loop turn of the
//                                                                  tick loop (lib/engine/tick.ts:
//                                                                  the ticks run back to back in
//                                                                  it), wall time: collections
//                                                                  and a wait for a CPU included
//
// Cluster mode only (nothing is exported for them in single-node mode: no role source is
// given and nobody takes over, and the SDK exports no instrument that has no data point):
//
//   tickd.cluster.role            observable gauge   1             1 leader, 0 follower; none
//                                                                  while the role is undecided
//   tickd.cluster.failovers       counter            {failover}    takeovers: this node became
//                                                                  leader after being a follower
//   tickd.cluster.quarantined     counter            {message}     stream messages kept out of
//                                                                  the copy: no record of the
//                                                                  cluster's (quarantine.ts)
//   tickd.placement.running       observable gauge   {execution}   executions running on this
//                                                                  node (lib/placement/)
//   tickd.placement.waiting       observable gauge   {execution}   the leader's executions
//                                                                  waiting for a node with
//                                                                  their rule's tags (0 on a
//                                                                  follower)
import type { Attributes, Meter } from '@opentelemetry/api';
import type { OutcomeKind } from '../domain/attempt.ts';
import type { RunnerType } from '../domain/runner-spec.ts';

export const METRIC_NAMES = [
  'tickd.jobs.scheduled',
  'tickd.jobs.executed',
  'tickd.jobs.removed',
  'tickd.execution.duration_ms',
  'tickd.connections.active',
  'tickd.rules.active',
  'tickd.persistence.compactions',
] as const;

export const CLUSTER_METRIC_NAMES = ['tickd.cluster.role', 'tickd.cluster.failovers', 'tickd.cluster.quarantined'] as const;

/** Cluster mode: where executions run (lib/placement/). */
export const PLACEMENT_METRIC_NAMES = ['tickd.placement.running', 'tickd.placement.waiting'] as const;

export const EXECUTION_METRIC_NAMES = ['tickd.execution.lateness_ms', 'tickd.execution.outcomes'] as const;

/** Exported once the tick loop has run. */
export const TICK_METRIC_NAMES = ['tickd.tick.turn_ms'] as const;

/** Exported once a schedule has skipped an occurrence. */
export const SCHEDULE_METRIC_NAMES = ['tickd.schedules.skipped'] as const;

export const ATTR_OUTCOME = 'tickd.outcome';
export const ATTR_RUNNER_KIND = 'tickd.runner.kind';
export const ATTR_RUNNER_OUTCOME = 'tickd.runner.outcome';
/** Why a schedule's occurrence was skipped: missed or overlap. */
export const ATTR_SKIP_REASON = 'tickd.skip.reason';

/** Runner durations span milliseconds (HTTP call) to minutes (shell job at its timeout). */
const DURATION_BUCKETS_MS = [1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 30_000, 60_000, 300_000];
/**
 * Lateness spans a fraction of a tick (2 ms at the default 512 Hz) to the hours of a daemon
 * that was down when its jobs came due.
 */
const LATENESS_BUCKETS_MS = [0.5, 1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 5000, 30_000, 300_000, 3_600_000];
/**
 * A tick turn is budgeted at 2 ms of ticks (lib/engine/tick.ts TURN_BUDGET_NS) plus a tick's
 * own work: the buckets say whether turns stay near that, and count those past 10 ms (issue
 * 37's bound on a turn while 100 000 schedules fire).
 */
const TURN_BUCKETS_MS = [0.25, 0.5, 1, 2, 3, 5, 10, 25, 50, 100, 1000];

export interface InstrumentSources {
  readonly connections: () => number;
  readonly rules: () => number;
  /** Completed compactions since start (monotonic). */
  readonly compactions: () => number;
  /** This node's role in cluster mode (null while undecided); absent in single-node mode. */
  readonly role?: () => 'leader' | 'follower' | null;
  /** Cluster mode: executions running on this node, and those the leader has waiting for a node. */
  readonly placement?: () => { readonly running: number; readonly waiting: number };
}

export interface JobInstruments {
  scheduled(): void;
  removed(): void;
  /** One finished execution: counted, and its duration recorded. */
  executed(success: boolean, durationMs: number): void;
  /** A due job no rule matched: it fails without running. */
  notRunnable(): void;
  /** A runner started `latenessMs` after its job's execution time (or a job no rule matched fired). */
  lateness(latenessMs: number): void;
  /** One execution's outcome (that of a due job no rule matched: runner 'none', 'no_rule'). */
  outcome(runner: RunnerType | 'none', kind: OutcomeKind, success: boolean): void;
  /** This node became leader after having been a follower (cluster mode). */
  tookOver(): void;
  /** A stream message that is no record of the cluster's was quarantined (cluster mode). */
  quarantined(): void;
  /** A schedule skipped `count` occurrences (tickd-protocol(7) SCHEDULES), for `reason`. */
  scheduleSkipped(reason: 'missed' | 'overlap', count: number): void;
  /** One event-loop turn of the tick loop took `ms` (wall time). */
  tickTurn(ms: number): void;
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
  const lateness = meter.createHistogram('tickd.execution.lateness_ms', {
    unit: 'ms',
    description: 'How late a runner started after its job\'s execution time (due jobs no rule matched: how late they fired).',
    advice: { explicitBucketBoundaries: LATENESS_BUCKETS_MS },
  });
  const outcomes = meter.createCounter('tickd.execution.outcomes', {
    unit: '{execution}',
    description: 'Executions by runner kind and outcome in the runner\'s terms; due jobs no rule matched as runner kind none.',
  });
  // One frozen attribute set per combination (a few dozen at most): no allocation per recording.
  const outcomeAttrs = new Map<string, Attributes>();
  const attrsOf = (runner: string, kind: OutcomeKind, success: boolean): Attributes => {
    const key = `${runner} ${kind} ${success}`;
    let attrs = outcomeAttrs.get(key);
    if (attrs === undefined) {
      attrs = Object.freeze({ [ATTR_RUNNER_KIND]: runner, [ATTR_RUNNER_OUTCOME]: kind, [ATTR_OUTCOME]: success ? 'executed' : 'failed' });
      outcomeAttrs.set(key, attrs);
    }
    return attrs;
  };
  const failovers = meter.createCounter('tickd.cluster.failovers', { unit: '{failover}', description: 'Times this node took over as leader after having been a follower.' });
  const quarantined = meter.createCounter('tickd.cluster.quarantined', { unit: '{message}', description: 'Stream messages this node kept out of its copy: no record of the cluster\'s (tickd(8) SECURITY).' });
  const skips = meter.createCounter('tickd.schedules.skipped', {
    unit: '{occurrence}', description: 'Occurrences of schedules skipped, by reason (missed: decided over a second late; overlap: the previous one still ran).',
  });
  const turns = meter.createHistogram('tickd.tick.turn_ms', {
    unit: 'ms',
    description: 'Wall time of each event-loop turn of the tick loop (the ticks run back to back in it): collections, and any wait for a CPU, included.',
    advice: { explicitBucketBoundaries: TURN_BUCKETS_MS },
  });
  const SKIP_ATTRS = { missed: Object.freeze({ [ATTR_SKIP_REASON]: 'missed' }), overlap: Object.freeze({ [ATTR_SKIP_REASON]: 'overlap' }) };
  const role = sources.role;
  if (role !== undefined) {
    meter.createObservableGauge('tickd.cluster.role', { unit: '1', description: 'This node\'s cluster role: 1 leader, 0 follower.' })
      .addCallback((result) => {
        const now = role();
        if (now !== null) result.observe(now === 'leader' ? 1 : 0);
      });
  }

  const placement = sources.placement;
  if (placement !== undefined) {
    meter.createObservableGauge('tickd.placement.running', { unit: '{execution}', description: 'Executions running on this node (cluster mode).' })
      .addCallback((result) => result.observe(placement().running));
    meter.createObservableGauge('tickd.placement.waiting', { unit: '{execution}', description: 'Executions the leader holds until a live node has the tags their rule requires (0 on a follower).' })
      .addCallback((result) => result.observe(placement().waiting));
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
    lateness: (ms) => { if (Number.isFinite(ms)) lateness.record(Math.max(0, ms)); },
    outcome: (runner, kind, success) => outcomes.add(1, attrsOf(runner, kind, success)),
    tookOver: () => failovers.add(1),
    quarantined: () => quarantined.add(1),
    scheduleSkipped: (reason, count) => skips.add(count, SKIP_ATTRS[reason]),
    tickTurn: (ms) => turns.record(ms),
  };
}
