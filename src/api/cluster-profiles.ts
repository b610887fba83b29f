/**
 * Named, documented timing presets for `ClusterNode.start` (docs/cluster.md, "Profiles"):
 *
 * ```ts
 * ClusterNode.start({ ...ClusterProfiles.fast, systemName: "shop", port: 2552, seedNodes });
 * ```
 *
 * Spread a profile first and override what you need after it.
 */
import type { ShardLeaseSettings } from "../core/shard/shard-lease-machine.js";
import type { ClusterNodeOptions } from "./cluster-node.js";

/** The timing options a profile sets. */
export type ClusterProfile = Readonly<
  Pick<ClusterNodeOptions, "settings" | "failureDetector" | "downing">
>;

/**
 * `default`: the defaults, favouring stability (a crashed member is removed after roughly
 * `stableAfterMs` 20 s plus detection). `fast`: for small clusters on a reliable network
 * (heartbeats, gossip and leader actions every 200 ms, a 1 s acceptable heartbeat pause,
 * the split brain resolver acting after 2 s of stability): a crashed member is removed
 * within a few seconds, at the price of more false suspicion under load or GC pauses.
 */
export const ClusterProfiles: Readonly<Record<"default" | "fast", ClusterProfile>> = Object.freeze({
  default: Object.freeze({}),
  fast: Object.freeze({
    settings: Object.freeze({
      gossipIntervalMs: 200,
      leaderActionsIntervalMs: 200,
      unreachableNodesReaperIntervalMs: 200,
      heartbeatIntervalMs: 200,
      expectedResponseAfterMs: 500,
    }),
    failureDetector: Object.freeze({
      acceptableHeartbeatPauseMs: 1_000,
      firstHeartbeatEstimateMs: 200,
    }),
    downing: Object.freeze({ stableAfterMs: 2_000 }),
  }),
});

/**
 * Timing presets for shard leases (docs/sharding.md, "Leases and fencing"), spread into a
 * `lease` option next to its provider:
 *
 * ```ts
 * sharding.init({ ..., lease: { provider: store.leases, ...ShardLeaseProfiles.fast } });
 * ```
 *
 * `default`: the defaults (ttl 4 s, renewal every 1 s). `fast`, to pair with
 * `ClusterProfiles.fast`: ttl 2 s, renewal every 400 ms, acquisition retried every 200 ms,
 * 300 ms reserved for stopping; a crashed holder's shards can start elsewhere about 2 s
 * after its last renewal, at the price of 2.5 renewals per shard and second against the
 * store (the default: 1) and of stopping a shard when the store is slow for more than
 * about 1.3 s.
 */
export const ShardLeaseProfiles: Readonly<
  Record<"default" | "fast", Readonly<Partial<ShardLeaseSettings>>>
> = Object.freeze({
  default: Object.freeze({}),
  fast: Object.freeze({
    ttlMs: 2_000,
    renewIntervalMs: 400,
    acquireRetryIntervalMs: 200,
    safetyMarginMs: 300,
  }),
});
