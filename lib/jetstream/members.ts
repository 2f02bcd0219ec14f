// Who is in the cluster, for GET /cluster and the logs. Each node writes how it stands (role,
// applied sequence) under its name in the bucket `<cluster>-nodes` every REPORT_MS; the
// bucket's TTL drops the entries of nodes that stopped. Every node watches the bucket, so a
// view is answered from memory. Choosing a leader is the lease's job alone.
//
// The leader also asks it how far every other node has applied the stream before it deletes
// a removal (removal-deletions.ts), and fails closed: while its own watch has delivered
// nothing for WATCH_FRESH_MS (this node's own report comes back every REPORT_MS), it counts
// nobody as caught up. A node is dropped from the count only after COUNTED_MS of silence
// while the watch worked. A node whose own reports stopped for half as long (stopped,
// starved, cut off; timed from when a report was sent) knows it may have been dropped and
// missed a removal (outOfView): its copy is rebuilt before it may lead.
//
// A report is sealed with the cluster's key over the cluster, the node's name and what it
// says (tickd(8) SECURITY): an entry anyone else wrote, or one copied under another name, is
// ignored, and at most MAX_MEMBERS names are kept, so a flood of keys costs no memory. (A
// copy of a node's own older report, put back under its name, can only hold deletions back.)
//
// A report also says the record format the node's code reads (lib/domain/format.ts), sealed
// apart (FORMAT_CONTEXT) so that a node of a tickd before formats, which checks only the first
// seal and ignores fields it does not know, still takes the report: a cluster is upgraded one
// node at a time. A report without it is such an older node's: format 1. The leader records
// the cluster's active format from them (lib/leadership/format-mark.ts; tickd(8) UPGRADING).
//
// A report also carries the records the node owes the stream (owed-claims.ts), sealed apart
// too: the node that takes over writes them (lib/leadership/restore-from-copy.ts).
//
// And what the node runs (issue 40, lib/placement/): its tags, capacity and executions
// running, sealed apart (PLACE_CONTEXT). The leader places executions on the nodes that said
// so lately (candidates), and gives away what a node held once the node is lost: gone from the
// bucket (a graceful stop deletes its entry), or silent for LOSS_MS while this node's own watch
// works (a node merely slow, or stopped for less, keeps what it runs).
import { Kvm, type KV, type KvWatchEntry } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import type { ClusterMember, ExecutorView, NodeRole } from '../domain/cluster-view.ts';
import { readTags } from '../domain/node-tags.ts';
import type { Logger } from '../log.ts';
import { createOrOpenBucket, leaseReplicas } from '../lease/bucket.ts';
import { FORMAT_VERSION, ZTICK_FORMAT } from '../domain/format.ts';
import type { ClusterKeys } from './cluster-keys.ts';
import { claimsText, readClaims, type Claim } from './owed-claims.ts';

export const REPORT_MS = 1_000;
/** A member not heard of for this long is left out of views (its entry is about to expire). */
const STALE_MS = 5 * REPORT_MS;
const BUCKET_TTL_MS = 10 * REPORT_MS;
/** Not heard of for this long: the leader no longer waits for this node before deleting. */
const COUNTED_MS = BUCKET_TTL_MS;
/** This node's reports stopped for this long: it may have been left out (COUNTED_MS, by the leader's clock). */
const OUT_OF_VIEW_MS = COUNTED_MS / 2;
/** The watch delivered nothing for this long: the view may be stale, so nobody counts as caught up. */
const WATCH_FRESH_MS = 3 * REPORT_MS;
/** Names kept at most: a cluster has a handful of nodes. */
const MAX_MEMBERS = 256;
const REPORT_CONTEXT = 'tickd/member/1\0';
const FORMAT_CONTEXT = 'tickd/member-format/1\0';
const OWED_CONTEXT = 'tickd/member-owed/1\0';
const PLACE_CONTEXT = 'tickd/member-place/1\0';
/** Silent for this long (its entry's TTL): the node is lost, and what it ran is run elsewhere. */
export const LOSS_MS = BUCKET_TTL_MS;
/** Placed on only when heard of this recently (a node that reports every second). */
const CANDIDATE_MS = 2 * REPORT_MS;

interface Seen {
  readonly role: NodeRole;
  readonly applied: number;
  /** The record format its code reads; 1 for a node of a tickd before formats. */
  readonly format: number;
  /** The records it owes the stream (owed-claims.ts), as its last report said. */
  readonly owed: readonly Claim[];
  /** What it runs, as it said; absent for a node of a tickd before placement. */
  readonly executor?: ExecutorView | undefined;
  readonly at: number;
}

export class Members {
  private readonly kv: KV;
  private readonly node: string;
  private readonly log: Logger;
  private readonly seen = new Map<string, Seen>();
  private closed = false;
  private stopWatch: (() => void) | null = null;
  /** When a report of this node was last stored (performance.now()). */
  private storedAt = performance.now();
  private leftOut = false;
  /** When the watch last delivered an entry (performance.now()). */
  private heardAt = -Infinity;

  private readonly cluster: string;
  private readonly keys: ClusterKeys;
  /** What this node says it runs (set once its executor exists; none: nothing said). */
  executor: (() => ExecutorView) | null = null;

  private constructor(kv: KV, cluster: string, node: string, keys: ClusterKeys, log: Logger) {
    this.kv = kv;
    this.cluster = cluster;
    this.node = node;
    this.keys = keys;
    this.log = log;
  }

  static async open(nc: NatsConnection, cluster: string, node: string, replicas: number, keys: ClusterKeys, log: Logger): Promise<Members> {
    const opts = { history: 1, ttl: BUCKET_TTL_MS, replicas: leaseReplicas(nc, replicas), description: `tickd nodes of cluster ${cluster}` };
    const kv = await createOrOpenBucket(nc, `${cluster}-nodes`, opts);
    const m = new Members(kv, cluster, node, keys, log);
    void m.watch();
    return m;
  }

  private async watch(): Promise<void> {
    while (!this.closed) {
      try {
        const it = await this.kv.watch({ key: '>' });
        this.stopWatch = () => it.stop();
        if (this.closed) it.stop();
        for await (const e of it) this.take(e);
      } catch (err) {
        if (!this.closed) this.log.debug({ err: (err as Error)?.message }, 'watching the cluster nodes failed; again');
      }
      if (!this.closed) await new Promise((r) => setTimeout(r, REPORT_MS));
    }
  }

  private take(e: KvWatchEntry): void {
    this.heardAt = performance.now();
    if (e.operation !== 'PUT') {
      this.seen.delete(e.key);
      return;
    }
    try {
      const v = JSON.parse(e.string()) as { role?: unknown; applied?: unknown; key?: unknown; mac?: unknown; format?: unknown; fmac?: unknown; owed?: unknown; omac?: unknown; place?: unknown; pmac?: unknown };
      if ((v.role !== 'leader' && v.role !== 'follower') || !Number.isSafeInteger(v.applied) || (v.applied as number) < 0) return;
      if (typeof v.key !== 'string' || typeof v.mac !== 'string') return;
      const key = Buffer.from(v.key, 'hex');
      if (!this.keys.verify([this.reportText(e.key, v.role, v.applied as number)], key, Buffer.from(v.mac, 'hex'))) return;
      let format = ZTICK_FORMAT;
      if (v.format !== undefined) {
        if (!Number.isSafeInteger(v.format) || (v.format as number) < 1 || typeof v.fmac !== 'string') return;
        if (!this.keys.verify([this.formatText(e.key, v.applied as number, v.format as number)], key, Buffer.from(v.fmac, 'hex'))) return;
        format = v.format as number;
      }
      let owed: Claim[] = [];
      if (typeof v.owed === 'string' && typeof v.omac === 'string' && e.key !== this.node
        && this.keys.verify([this.owedText(e.key, v.applied as number, v.owed)], key, Buffer.from(v.omac, 'hex'))) owed = readClaims(v.owed);
      let executor: ExecutorView | undefined;
      if (typeof v.place === 'string' && typeof v.pmac === 'string' && v.place.length <= 4096
        && this.keys.verify([this.placeText(e.key, v.applied as number, v.place)], key, Buffer.from(v.pmac, 'hex'))) executor = readExecutor(v.place);
      if (!this.seen.has(e.key) && this.seen.size >= MAX_MEMBERS) return;
      this.seen.set(e.key, { role: v.role, applied: v.applied as number, format, owed, executor, at: performance.now() });
    } catch { /* not ours: ignored */ }
  }

  private reportText(node: string, role: NodeRole, applied: number): Buffer {
    return Buffer.from(`${REPORT_CONTEXT}${this.cluster}\0${node}\0${role}\0${applied}`);
  }

  private formatText(node: string, applied: number, format: number): Buffer {
    return Buffer.from(`${FORMAT_CONTEXT}${this.cluster}\0${node}\0${applied}\0${format}`);
  }

  private owedText(node: string, applied: number, owed: string): Buffer {
    return Buffer.from(`${OWED_CONTEXT}${this.cluster}\0${node}\0${applied}\0${owed}`);
  }

  private placeText(node: string, applied: number, place: string): Buffer {
    return Buffer.from(`${PLACE_CONTEXT}${this.cluster}\0${node}\0${applied}\0${place}`);
  }

  /** Says how this node stands, and what it owes the stream; never rejects (a view may then be a little stale). */
  report(role: NodeRole, applied: number, owed: readonly Claim[] = []): void {
    void this.store(role, applied, owed);
  }

  /**
   * Says how this node stands; true once it is stored. A node about to read the stream says
   * so first, so that no removal it may need is deleted meanwhile.
   */
  async store(role: NodeRole, applied: number, claims: readonly Claim[] = []): Promise<boolean> {
    if (this.closed) return false;
    const sentAt = performance.now();
    if (sentAt - this.storedAt > OUT_OF_VIEW_MS) this.leftOut = true;
    const executor = this.executor?.();
    this.seen.set(this.node, { role, applied, format: FORMAT_VERSION, owed: [], executor, at: sentAt });
    try {
      const mac = this.keys.mac([this.reportText(this.node, role, applied)])!.toString('hex');
      const fmac = this.keys.mac([this.formatText(this.node, applied, FORMAT_VERSION)])!.toString('hex');
      const owed = claimsText(claims);
      const omac = owed === null ? undefined : this.keys.mac([this.owedText(this.node, applied, owed)])!.toString('hex');
      const place = executor === undefined ? undefined : JSON.stringify(executor);
      const pmac = place === undefined ? undefined : this.keys.mac([this.placeText(this.node, applied, place)])!.toString('hex');
      await this.kv.put(this.node, JSON.stringify({ role, applied, key: this.keys.signingId.toString('hex'), mac, format: FORMAT_VERSION, fmac, owed, omac, place, pmac }));
      // From when it was sent: an answer read after a long stop says nothing about the stop.
      this.storedAt = Math.max(this.storedAt, sentAt);
      return true;
    } catch (err) {
      this.log.debug({ err: (err as Error)?.message }, 'reporting this node to the cluster failed');
      return false;
    }
  }

  /**
   * Whether this node may have been left out of the others' views since its copy was built
   * (its reports stopped for OUT_OF_VIEW_MS), so that a removal it needed may be gone.
   */
  get outOfView(): boolean {
    return this.leftOut || performance.now() - this.storedAt > OUT_OF_VIEW_MS;
  }

  /** A copy is being built from the whole stream: what happened before no longer matters. */
  rebuilding(): void {
    this.leftOut = false;
    this.storedAt = performance.now();
  }

  /**
   * The lowest sequence the other nodes have applied (Infinity: no other node); -Infinity
   * while this node's view may be stale.
   */
  appliedByOthers(): number {
    if (performance.now() - this.heardAt > WATCH_FRESH_MS) return -Infinity;
    let min = Infinity;
    for (const [name, s] of this.seen) {
      if (name !== this.node && this.heardAt - s.at <= COUNTED_MS && s.applied < min) min = s.applied;
    }
    return min;
  }

  /** The members heard of lately, by name, with their lag behind `lastSeq`. */
  list(lastSeq: number): ClusterMember[] {
    const now = performance.now();
    const out: ClusterMember[] = [];
    for (const [name, s] of this.seen) {
      if (now - s.at > STALE_MS) continue;
      const m = { name, role: s.role, appliedSeq: s.applied, lag: Math.max(0, lastSeq - s.applied), seenAgoMs: Math.round(now - s.at), format: s.format };
      out.push(s.executor === undefined ? m : { ...m, executor: s.executor });
    }
    return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** The other nodes that run what the leader sends and said so lately: where executions may go. */
  candidates(): Array<{ readonly name: string; readonly executor: ExecutorView }> {
    const now = performance.now();
    const out: Array<{ name: string; executor: ExecutorView }> = [];
    for (const [name, s] of this.seen) {
      if (name !== this.node && s.executor !== undefined && now - s.at <= CANDIDATE_MS) out.push({ name, executor: s.executor });
    }
    return out;
  }

  /** Every other node heard of that runs what the leader sends, lost or not (a census asks each). */
  executorNames(): string[] {
    return [...this.seen].filter(([name, s]) => name !== this.node && s.executor !== undefined).map(([name]) => name);
  }

  /**
   * Whether node `name` is lost: gone from the bucket, or silent for LOSS_MS while this node's
   * watch works. Never while the watch itself may be stale: a node cut off from NATS must not
   * give away what the others still run.
   */
  lost(name: string): boolean {
    if (performance.now() - this.heardAt > WATCH_FRESH_MS) return false;
    const s = this.seen.get(name);
    return s === undefined || this.heardAt - s.at > LOSS_MS;
  }

  /** Which run of node `name`'s process last said what it runs (ExecutorView.run); undefined when none did. */
  runOf(name: string): string | undefined {
    return this.seen.get(name)?.executor?.run;
  }

  /** What the other nodes heard of lately owe the stream (their last reports'). */
  othersOwe(): Claim[] {
    const now = performance.now();
    return [...this.seen].flatMap(([name, s]) => (name === this.node || now - s.at > STALE_MS ? [] : s.owed));
  }

  /** The format of each node heard of lately, by name. */
  formats(): Map<string, number> {
    return new Map(this.list(0).map((m) => [m.name, m.format]));
  }

  /** Stops watching; this node's entry is deleted so views drop it at once. */
  async close(): Promise<void> {
    this.closed = true;
    this.stopWatch?.();
    await this.kv.delete(this.node).catch(() => {});
  }
}

/** A report's `place`, or undefined when it is not what this code reads. */
function readExecutor(text: string): ExecutorView | undefined {
  try {
    const v = JSON.parse(text) as { tags?: unknown; capacity?: unknown; running?: unknown; run?: unknown };
    const tags = readTags(v.tags);
    if ('error' in tags || !Number.isSafeInteger(v.capacity) || !Number.isSafeInteger(v.running)) return undefined;
    if ((v.capacity as number) < 1 || (v.running as number) < 0 || typeof v.run !== 'string' || v.run.length > 64) return undefined;
    return { tags: tags.tags, capacity: v.capacity as number, running: v.running as number, run: v.run };
  } catch {
    return undefined;
  }
}
