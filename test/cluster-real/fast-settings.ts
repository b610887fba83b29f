/**
 * Timings of the real-process membership tests: the exported fast profile
 * (ClusterProfiles.fast: every periodic task at 200 ms, a 1 s acceptable heartbeat pause
 * and a 2 s SBR stability window) plus quicker joins, so a scenario takes seconds. Shared by the child (cluster-node-main.ts) and the tests (for bounds).
 */
import { ClusterProfiles } from "../../src/api/cluster-profiles.js";
import type { ClusterOptions } from "../../src/cluster/membership/index.js";

/** Cluster timings that keep real-process scenarios to a few seconds. */
export const FAST_CLUSTER_SETTINGS = {
  ...(ClusterProfiles.fast.settings as {
    gossipIntervalMs: 200;
    leaderActionsIntervalMs: 200;
    unreachableNodesReaperIntervalMs: 200;
    heartbeatIntervalMs: 200;
    expectedResponseAfterMs: 500;
  }),
  periodicTasksInitialDelayMs: 0,
  seedNodeTimeoutMs: 1_000,
  seedNodeInitJoinResendIntervalMs: 200,
  retryUnsuccessfulJoinAfterMs: 3_000,
} as const satisfies ClusterOptions["settings"];

export const FAST_FAILURE_DETECTOR = ClusterProfiles.fast.failureDetector as {
  readonly acceptableHeartbeatPauseMs: 1_000;
  readonly firstHeartbeatEstimateMs: 200;
};

export const SBR_STABLE_AFTER_MS = ClusterProfiles.fast.downing?.stableAfterMs ?? 2_000;

/**
 * Sharding timings of the real-process sharding tests: regions retry registration and
 * GetShardHome every 500 ms, the coordinator resends HostShard after 1 s and gives up a
 * hand-off after 5 s, a shard force-stops entities 5 s into a hand-off. The rebalance
 * interval stays at its default unless a test sets it.
 */
export const FAST_SHARDING_SETTINGS = {
  region: { retryIntervalMs: 500 },
  coordinator: { shardStartTimeoutMs: 1_000, handOffTimeoutMs: 5_000 },
  shard: { handOffTimeoutMs: 5_000 },
} as const;
