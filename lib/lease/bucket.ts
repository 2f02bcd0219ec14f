// The lease bucket: one JetStream key-value bucket per tickd cluster, `<cluster>-lease`
// (stream `KV_<cluster>-lease`), holding the one key the leader keeps alive.
//
// Invariants:
// - history 1: only the current holder's write matters; each refresh replaces it.
// - The bucket's TTL (the stream's max_age) is at least every node's --lease-ttl. The server
//   drops an unrefreshed key max_age after it STORED the last write, while the holder stops
//   at the moment it SENT that write plus its own TTL; so the key outlives the holder's claim
//   only if max_age >= the holder's TTL. Opening with a longer TTL than the bucket's raises
//   the bucket's (safe for every node); opening with a shorter one leaves it alone (failover
//   then takes the longer TTL) because lowering it could cut short a running leader that
//   still counts with the longer one. To lower it, delete the bucket with the cluster down.
// - replicas: 1 on a server outside any cluster (JetStream refuses more there), else at most 5.
// - The returned KV talks through a JetStream context whose request timeout is the TTL: no
//   lease operation is worth waiting for longer, since by then the key has expired by itself
//   and our own clock has ended any claim the operation could have made.
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from '../log.ts';

/** JetStream's own ceiling on a stream's replicas. */
const MAX_REPLICAS = 5;
/** A value is one small JSON object; anything bigger is not ours. */
const MAX_VALUE_BYTES = 1024;
const NS_PER_MS = 1_000_000;

export function leaseBucketName(clusterName: string): string {
  return `${clusterName}-lease`;
}

/** Replicas the connected server can give: more than 1 only inside a NATS cluster. */
export function leaseReplicas(nc: NatsConnection, wanted: number): number {
  if (nc.info?.cluster === undefined) return 1;
  return Math.max(1, Math.min(MAX_REPLICAS, Math.floor(wanted)));
}

/**
 * Opens the lease bucket `<clusterName>-lease`, creating it when absent with history 1,
 * TTL (max_age) = ttlMs and the given replicas (capped, see above); raises the TTL of an
 * existing bucket that is shorter than ttlMs. `log` (optional) hears about TTL mismatches.
 */
export async function openLeaseBucket(
  nc: NatsConnection, clusterName: string, ttlMs: number, replicas: number, log?: Logger,
): Promise<KV> {
  if (!(ttlMs > 0)) throw new Error(`lease TTL must be positive, got ${ttlMs}`);
  const bucket = leaseBucketName(clusterName);
  const status = await (await createOrOpenBucket(nc, bucket, {
    history: 1,
    ttl: ttlMs,
    replicas: leaseReplicas(nc, replicas),
    maxValueSize: MAX_VALUE_BYTES,
    description: `tickd leader lease of cluster ${clusterName}`,
  })).status();
  // ttl 0 means "never expires": then a dead leader's key would block everyone for ever.
  if (status.ttl === 0 || status.ttl < ttlMs) {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.update(status.streamInfo.config.name, { max_age: ttlMs * NS_PER_MS });
    log?.warn({ bucket, was: status.ttl, now: ttlMs }, 'lease bucket TTL raised to our --lease-ttl');
  } else if (status.ttl > ttlMs) {
    log?.warn({ bucket, bucketTtl: status.ttl, ttl: ttlMs },
      'lease bucket TTL is longer than our --lease-ttl: failover waits for the bucket TTL');
  }
  return new Kvm(jetstream(nc, { timeout: ttlMs })).open(bucket);
}

/**
 * Kvm.create() is "stream info, add when not found": two nodes starting together can both
 * see "not found", and the slower add then fails if its configuration differs. One more
 * round finds the stream the other node made.
 */
export async function createOrOpenBucket(nc: NatsConnection, bucket: string, opts: Parameters<Kvm['create']>[1]): Promise<KV> {
  const kvm = new Kvm(nc);
  try {
    return await kvm.create(bucket, { ...opts });
  } catch {
    return kvm.create(bucket, { ...opts });
  }
}
