// Cluster mode's storage (tickd(8) CLUSTER MODE): the log is the cluster's JetStream stream.
// Start-up, in order: connect to NATS (a bounded wait: unreachable is a startup error) ->
// the stream, created if absent -> the lease and nodes buckets -> the stream (its checkpoint,
// then the messages after it) replayed into the stores, then followed (lib/leadership/node.ts):
// the node starts as a follower, serves its clients by forwarding to the leader, and competes
// for the lease once the primary starts it. Compaction is the stream's own retention (the last
// message per subject); the leader also has checkpoints made (lib/leadership/checkpoint-schedule.ts),
// in the compaction child.
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { ClusterOptions } from '../cli.ts';
import { errorText, StartupError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { JobStore } from '../store/jobs.ts';
import type { RuleStore } from '../store/rules.ts';
import type { ScheduleStore } from '../store/schedules.ts';
import { ClusterKeys } from '../jetstream/cluster-keys.ts';
import { connectCluster } from '../jetstream/connect.ts';
import { Members } from '../jetstream/members.ts';
import { ensureStream } from '../jetstream/stream.ts';
import { clusterSubjects } from '../jetstream/subjects.ts';
import { openLeaseBucket } from '../lease/lease.ts';
import type { CheckpointRunner } from '../leadership/checkpoint-schedule.ts';
import { ClusterNode } from '../leadership/node.ts';
import type { Storage } from './storage.ts';

const CONNECT_TIMEOUT_MS = 10_000;
const JETSTREAM_WAIT_MS = 20_000;

/**
 * A NATS cluster that has just started answers JetStream requests only once it elected its
 * meta leader (seconds): try again for a bounded time, then fail start-up with the reason.
 */
async function untilJetStreamAnswers<T>(log: Logger, stopped: () => boolean, attempt: () => Promise<T>): Promise<T> {
  const deadline = performance.now() + JETSTREAM_WAIT_MS;
  for (let tries = 1; ; tries++) {
    try {
      return await attempt();
    } catch (err) {
      const why = errorText(err);
      if (stopped() || performance.now() > deadline) throw new StartupError('cluster', 'ClusterError', `JetStream is not available: ${why}`);
      if (tries === 1) log.warn({ why }, 'JetStream not answering yet; trying again');
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

export interface ClusterStorageInputs {
  readonly opts: ClusterOptions;
  readonly jobs: JobStore;
  readonly rules: RuleStore;
  readonly schedules: ScheduleStore;
  readonly log: Logger;
  readonly stopped: () => boolean;
  /** Makes the cluster's checkpoints (in the compaction child). */
  readonly checkpoints: CheckpointRunner;
  /** Ends what makes them, at the close. */
  readonly closeCheckpoints: () => Promise<void>;
}

export async function openClusterStorage(inputs: ClusterStorageInputs): Promise<Storage> {
  const { opts, jobs, rules, schedules, log, stopped, checkpoints } = inputs;
  const clog = log.child({ component: 'cluster' });
  let keys: ClusterKeys;
  try {
    const read = ClusterKeys.fromFile(opts.secretFile);
    keys = read.keys;
    if (read.warning !== null) clog.warn(read.warning);
  } catch (err) {
    throw new StartupError('cluster', 'ClusterError', errorText(err));
  }
  const nc = await connectCluster({
    urls: opts.urls, credsFile: opts.credsFile, caFile: opts.caFile, name: opts.nodeName, log: clog, connectTimeoutMs: CONNECT_TIMEOUT_MS,
    allowUnauthenticatedNats: opts.allowUnauthenticatedNats,
  });
  let node: ClusterNode | null = null;
  try {
    const subjects = clusterSubjects(opts.name);
    const jsm = await untilJetStreamAnswers(clog, stopped, async () => {
      const m = await jetstreamManager(nc);
      await ensureStream(m, subjects, opts.replicas, clog);
      return m;
    });
    const js = jetstream(nc);
    clog.info('compression_interval has nothing to do in cluster mode: the stream keeps only the last record of each job, rule and schedule');
    const leaseKv = await untilJetStreamAnswers(clog, stopped, () => openLeaseBucket(nc, opts.name, opts.leaseTtlMs, opts.replicas, clog));
    const members = await untilJetStreamAnswers(clog, stopped, () => Members.open(nc, opts.name, opts.nodeName, opts.replicas, keys, clog));
    const started = new ClusterNode({ opts, nc, js, jsm, subjects, leaseKv, members, checkpoints, jobs, rules, schedules, log: clog, keys });
    node = started;
    await untilJetStreamAnswers(clog, stopped, () => started.rebuild());
    clog.info({ cluster: opts.name, node: opts.nodeName }, 'following the stream; a follower until it takes the lease');
    return {
      kind: 'jetstream',
      path: null,
      journal: started.journal,
      compression: () => 'idle',
      compactions: () => 0,
      startCompaction() {},
      node: started,
      handOver: () => started.handOver(),
      close: async () => {
        await started.close(); // the last writes awaited, the lease released when held
        await nc.close();
        await inputs.closeCheckpoints();
      },
    };
  } catch (err) {
    node?.stopReporting();
    await nc.close();
    await inputs.closeCheckpoints();
    if (err instanceof StartupError) throw err;
    throw new StartupError('cluster', 'ClusterError', errorText(err));
  }
}
