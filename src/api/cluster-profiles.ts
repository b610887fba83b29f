/**
 * Named, documented timing presets for `ClusterNode.start` (docs/cluster.md, "Profiles"):
 *
 * ```ts
 * ClusterNode.start({ ...ClusterProfiles.fast, systemName: "shop", port: 2552, seedNodes });
 * ```
 *
 * Spread a profile first and override what you need after it.
 */
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
