// Cluster mode's storage (tickd(8) CLUSTER MODE): the log is the cluster's JetStream stream.
// Start-up, in order: connect to NATS (a bounded wait: unreachable is a startup error) ->
// the stream, created if absent -> the leader lease (this node waits while another holds it;
// nothing is read or written before it holds it) -> replay of the whole stream into the stores
// -> the journal on the stream, fenced by the sequence it expects. Compaction is the stream's
// own retention (the last message per subject): nothing to run.
//
// Leadership ends for good when the lease is lost (not refreshed within its TTL by this node's
// own clock, or taken) or a publish fails (another writer, NATS unreachable): the journal is
// fenced at once and `lost` resolves, so the primary stops firing. At a graceful stop, the
// journal's last writes are awaited and then the lease is released, so another node can take
// over without waiting for the TTL.
import { randomBytes } from 'node:crypto';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { ClusterOptions } from '../cli.ts';
import { StartupError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { JobStore } from '../store/jobs.ts';
import type { RuleStore } from '../store/rules.ts';
import { connectCluster } from '../jetstream/connect.ts';
import { StreamJournal } from '../jetstream/journal.ts';
import { replayStream } from '../jetstream/replay.ts';
import { ensureStream } from '../jetstream/stream.ts';
import { clusterSubjects } from '../jetstream/subjects.ts';
import { isLeaseAborted, Lease, openLeaseBucket } from '../lease/lease.ts';
import { applyRecord, type Storage } from './storage.ts';

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
      const why = (err as Error)?.message ?? String(err);
      if (stopped() || performance.now() > deadline) throw new StartupError('cluster', 'ClusterError', `JetStream is not available: ${why}`);
      if (tries === 1) log.warn({ why }, 'JetStream not answering yet; trying again');
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

export async function openClusterStorage(
  opts: ClusterOptions, jobs: JobStore, rules: RuleStore, log: Logger, stopped: () => boolean,
): Promise<Storage> {
  const clog = log.child({ component: 'cluster' });
  const nc = await connectCluster({
    urls: opts.urls, credsFile: opts.credsFile, caFile: opts.caFile, name: opts.nodeName, log: clog, connectTimeoutMs: CONNECT_TIMEOUT_MS,
  });
  try {
    const subjects = clusterSubjects(opts.name);
    const jsm = await untilJetStreamAnswers(clog, stopped, async () => {
      const m = await jetstreamManager(nc);
      await ensureStream(m, subjects, opts.replicas, clog);
      return m;
    });
    const js = jetstream(nc);
    clog.info('compression_interval has nothing to do in cluster mode: the stream keeps only the last record of each job and rule');
    const kv = await untilJetStreamAnswers(clog, stopped, () => openLeaseBucket(nc, opts.name, opts.leaseTtlMs, opts.replicas, clog));
    let onLost: (why: string) => void = () => {};
    const lost = new Promise<string>((resolve) => { onLost = resolve; });
    const holder = `${opts.nodeName}/${process.pid}/${randomBytes(4).toString('hex')}`;
    const lease = new Lease({ kv, holder, ttlMs: opts.leaseTtlMs, log: clog, onLost: (why) => onLost(`lease lost: ${why}`) });
    clog.info({ cluster: opts.name, node: opts.nodeName }, 'taking the leader lease');
    await lease.acquire(stopped);
    clog.info('leader lease held: this node writes and fires');
    // Replaying again after a failed attempt is harmless: every record states a whole value.
    const replay = await untilJetStreamAnswers(clog, stopped, () => replayStream(js, jsm, subjects, (rec) => applyRecord(jobs, rules, rec)));
    clog.info({ records: replay.records, lastSeq: replay.lastSeq }, 'stream replayed');
    const stream = new StreamJournal({
      js, jsm, subjects, lastSeq: replay.lastSeq, writerId: holder, log: clog, onFenced: onLost,
    });
    // However leadership ends (the lease, even during the replay, or the journal itself), the
    // journal writes nothing more; fence() is idempotent.
    void lost.then((why) => stream.fence(why));
    return {
      kind: 'jetstream',
      path: null,
      journal: stream,
      compression: () => 'idle',
      compactions: () => 0,
      startCompaction() {},
      lost,
      writable: () => stream.writable,
      close: async () => {
        await stream.close();
        await lease.release(); // deletes the key only while it holds our revision; never rejects
        lease.close();
        await nc.close();
      },
    };
  } catch (err) {
    await nc.close();
    if (err instanceof StartupError || isLeaseAborted(err)) throw err;
    throw new StartupError('cluster', 'ClusterError', (err as Error)?.message ?? String(err));
  }
}
