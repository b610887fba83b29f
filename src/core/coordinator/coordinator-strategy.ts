/**
 * The allocation strategy as the coordinator machine calls it: one synchronous object,
 * so users can plug in their own (S18). The driver wraps an asynchronous user strategy
 * (it awaits, then feeds the answer as an input); the machine itself never waits.
 *
 * The machine gives `allocateShard` only the regions a new shard may go to (see
 * coordinator-machine.ts: not shutting down, member up and reachable, newest appVersion)
 * and accepts only one of those as the answer. `rebalance` sees every live region that is
 * not shutting down; the machine skips the call entirely while appVersions differ.
 *
 * The built-in strategies of allocation/ are adapted here with their settings resolved
 * once, up front, so a bad setting fails at construction, not at the first tick.
 */
import type { RegionId } from "../../protocol/sharding.js";
import type { ShardId } from "../sharding/shard-id.js";
import {
  type ConsistentHashingSettings,
  consistentHashingAllocate,
  consistentHashingRebalance,
  resolveConsistentHashingSettings,
} from "./allocation/consistent-hashing.js";
import {
  type LeastShardSettings,
  leastShardAllocate,
  leastShardRebalance,
  resolveLeastShardSettings,
} from "./allocation/least-shard.js";
import type { RebalanceClusterFacts, RegionView } from "./allocation/region-view.js";
import {
  resolveThresholdRebalanceSettings,
  type ThresholdRebalanceSettings,
  thresholdRebalance,
} from "./allocation/threshold-rebalance.js";

/** A shard allocation strategy, synchronous and deterministic. */
export interface CoordinatorAllocationStrategy {
  /**
   * The region that should host the new `shard`, chosen among `regions` (never empty), or
   * undefined to leave it unallocated for now (the machine asks again later).
   * `requester` is the region or proxy that asked (the coordinator's own id when it
   * allocates a remembered shard by itself).
   */
  allocateShard(
    requester: RegionId,
    shard: ShardId,
    regions: readonly RegionView[],
  ): RegionId | undefined;
  /**
   * Shards to hand off now. `inProgress` are shards already being handed off.
   * `cluster` tells whether membership is in flux (the built-ins then return nothing).
   */
  rebalance(
    regions: readonly RegionView[],
    inProgress: ReadonlySet<ShardId>,
    cluster: RebalanceClusterFacts,
  ): Iterable<ShardId>;
}

/** shardkit's default: least-shard allocation with the limited two-phase rebalance. */
export function leastShardStrategy(
  overrides?: Partial<LeastShardSettings>,
): CoordinatorAllocationStrategy {
  const settings = resolveLeastShardSettings(overrides);
  return {
    allocateShard: (_requester, _shard, regions) => leastShardAllocate(regions)?.regionId,
    rebalance: (regions, inProgress, cluster) =>
      leastShardRebalance(regions, inProgress, settings, cluster),
  };
}

/** The older threshold rebalance with least-shard allocation. */
export function thresholdStrategy(
  overrides?: Partial<ThresholdRebalanceSettings>,
): CoordinatorAllocationStrategy {
  const settings = resolveThresholdRebalanceSettings(overrides);
  return {
    allocateShard: (_requester, _shard, regions) => leastShardAllocate(regions)?.regionId,
    rebalance: (regions, inProgress, cluster) =>
      thresholdRebalance(regions, inProgress, settings, cluster),
  };
}

/** Rendezvous hashing of shard ids over the region members. */
export function consistentHashingStrategy(
  overrides?: Partial<ConsistentHashingSettings>,
): CoordinatorAllocationStrategy {
  const settings = resolveConsistentHashingSettings(overrides);
  return {
    allocateShard: (_requester, shard, regions) =>
      consistentHashingAllocate(regions, shard)?.regionId,
    rebalance: (regions, inProgress, cluster) =>
      consistentHashingRebalance(regions, inProgress, settings, cluster),
  };
}
