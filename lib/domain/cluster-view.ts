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
}
