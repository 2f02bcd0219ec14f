// What GET /cluster answers (tickd(8) CLUSTER MODE): one node's view of its cluster. Stream
// sequences are JetStream's (below 2^53), so plain numbers.

export type NodeRole = 'leader' | 'follower';

export interface ClusterMember {
  readonly name: string;
  readonly role: NodeRole;
  /** The last stream sequence this member has applied (a leader: written and acknowledged). */
  readonly appliedSeq: number;
  /** The stream's last sequence minus appliedSeq, never below 0. */
  readonly lag: number;
  /** How long ago the member last said how it stands (it says so every second or so). */
  readonly seenAgoMs: number;
  /** The record format its code reads (lib/domain/format.ts); 1 for a tickd before formats. */
  readonly format: number;
  /** What it runs (issue 40), as it said; absent for a node of a tickd that runs nothing the leader sends. */
  readonly executor?: ExecutorView;
}

/** A node as an executor of the cluster's jobs (tickd(8) CLUSTER MODE "Where jobs run"). */
export interface ExecutorView {
  /** Its tags (--node-tags): a rule's `on` picks the nodes having every one. */
  readonly tags: readonly string[];
  /** Executions it runs at once (its --max-inflight): a job goes to the matching node least loaded by it. */
  readonly capacity: number;
  /** Executions running on it now. */
  readonly running: number;
  /**
   * Which run of the node's process said so (random at each start): a node that restarted
   * under the same name holds nothing the one before ran. Not shown in GET /cluster.
   */
  readonly run: string;
}

/** A record in the stream that this node's code cannot read: it applies nothing after it. */
export interface UpgradeNeeded {
  /** The format the record needs. */
  readonly format: number;
  readonly seq: number;
  readonly subject: string;
}

export interface ClusterView {
  readonly cluster: string;
  readonly node: string;
  readonly role: NodeRole;
  /** The current leader's node name; null while no node holds the lease. */
  readonly leader: string | null;
  readonly lastSeq: number;
  readonly appliedSeq: number;
  /** Every node that said how it stands within the last few seconds, this one included, by name. */
  readonly nodes: readonly ClusterMember[];
  /** The record format this node's code reads. */
  readonly format: number;
  /** The cluster's active format, as the stream records it (1 until it does): what the cluster may write (tickd(8) UPGRADING). */
  readonly activeFormat: number;
  /** Set once this node met a record too new for its code: it must be upgraded. */
  readonly upgradeNeeded: UpgradeNeeded | null;
  /** The leader's placement (issue 40): executions waiting for a node whose tags match; absent on a follower. */
  readonly placement?: PlacementView;
}

export interface PlacementView {
  /** Executions that no live node with the tags their rule requires could take yet. */
  readonly waiting: number;
  /** Executions sent to each node and not reported yet, by node name. */
  readonly placed: Readonly<Record<string, number>>;
}
