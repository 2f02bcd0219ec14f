// What a cluster node (node.ts) is made of, and what the primary does at each change of its role.
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import type { ClusterOptions } from '../cli.ts';
import type { ClusterKeys } from '../jetstream/cluster-keys.ts';
import type { LocalBatch } from '../jetstream/forwarding.ts';
import type { Members } from '../jetstream/members.ts';
import type { ClusterSubjects } from '../jetstream/subjects.ts';
import type { Logger } from '../log.ts';
import type { JobStore } from '../store/jobs.ts';
import type { RuleStore } from '../store/rules.ts';
import type { ScheduleStore } from '../store/schedules.ts';
import type { CheckpointRunner } from './checkpoint-schedule.ts';

export interface NodeParts {
  readonly opts: ClusterOptions;
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly subjects: ClusterSubjects;
  readonly leaseKv: KV;
  readonly members: Members;
  /** Makes the cluster's checkpoints while this node leads (checkpoint-schedule.ts). */
  readonly checkpoints: CheckpointRunner;
  readonly jobs: JobStore;
  readonly rules: RuleStore;
  readonly schedules: ScheduleStore;
  readonly log: Logger;
  /** The cluster's keys: what seals its records and forwarded batches (cluster-keys.ts). */
  readonly keys: ClusterKeys;
}

/** What the primary does at each change of role. */
export interface RoleHooks {
  /** The engine's batch path: the leader runs its own workers' and the followers' batches here. */
  readonly local: LocalBatch;
  /** Now leading: the copy is current and the journal live. Jobs left `triggered` run again; schedules are armed. */
  readonly promoted: () => void;
  /**
   * The step-down itself, synchronously, as the journal is fenced: from here on no result is
   * taken (one taken now would be dropped by `demoted`, yet its node told it was taken).
   */
  readonly steppingDown?: () => void;
  /** No longer leading, before the copy is rebuilt: the engine forgets its attempts and results. */
  readonly demoted: () => void;
  /** A stream message was quarantined (quarantine.ts): counted in a metric. */
  readonly quarantined?: () => void;
}
