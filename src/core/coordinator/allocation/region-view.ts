/**
 * Plain-data inputs of the shard allocation strategies. The coordinator driver builds
 * these from its registry and the membership state; the strategies stay pure and
 * synchronous (sans-IO) so they can be tested step by step and replayed by the simulator.
 *
 * Order is meaningful: `RegionView[]` order is the registration (allocation) order and
 * breaks ties between equally suitable regions; `shards` order is allocation order, and
 * the least-shard rebalance moves shards from the FRONT of a region's list (the oldest).
 */
import type { MemberStatus } from "../../membership/member-status.js";
import type { ShardId } from "../../sharding/shard-id.js";

/** The cluster member a region runs on, as far as allocation cares. */
export interface RegionMember {
  /** Member address; identifies the node (used by consistent hashing). */
  readonly address: string;
  readonly status: MemberStatus;
  /** Application version of the member (compared with compareAppVersion). */
  readonly appVersion: string;
}

/** One shard region (one per entity type per node) and the shards it hosts. */
export interface RegionView {
  readonly regionId: string;
  readonly member: RegionMember;
  /** Hosted shards in allocation order (oldest first). */
  readonly shards: readonly ShardId[];
}

/** Cluster-wide facts that block rebalancing while membership is in flux. */
export interface RebalanceClusterFacts {
  /** Some member of the coordinator's data center is unreachable. */
  readonly hasUnreachableMember: boolean;
  /** Some member of the coordinator's data center is joining or weakly-up. */
  readonly hasJoiningMember: boolean;
}

/** Facts for a healthy, settled cluster (nothing blocks rebalancing). */
export const SETTLED_CLUSTER: RebalanceClusterFacts = Object.freeze({
  hasUnreachableMember: false,
  hasJoiningMember: false,
});

/** A member as seen by rebalanceClusterFactsOf. */
export interface ClusterMemberFacts {
  readonly address: string;
  readonly status: MemberStatus;
  readonly dataCenter: string;
}

/**
 * Derives the rebalance-blocking facts from the member list, the set of unreachable member
 * addresses and the coordinator's own data center. Members of other data centers are
 * ignored (each data center runs its own coordinator).
 */
export function rebalanceClusterFactsOf(
  members: readonly ClusterMemberFacts[],
  unreachableAddresses: ReadonlySet<string>,
  selfDataCenter: string,
): RebalanceClusterFacts {
  let hasUnreachableMember = false;
  let hasJoiningMember = false;
  for (const m of members) {
    if (m.dataCenter !== selfDataCenter) continue;
    if (unreachableAddresses.has(m.address)) hasUnreachableMember = true;
    if (m.status === "joining" || m.status === "weakly-up") hasJoiningMember = true;
  }
  return { hasUnreachableMember, hasJoiningMember };
}
