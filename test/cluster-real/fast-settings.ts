/**
 * Timings of the real-process membership tests: every periodic task at 200 ms, a 1 s
 * acceptable heartbeat pause and a 2 s SBR stability window, so a scenario takes
 * seconds. Shared by the child (cluster-node-main.ts) and the tests (for bounds).
 */
import type { ClusterOptions } from "../../src/cluster/membership/index.js";

/** Cluster timings that keep real-process scenarios to a few seconds. */
export const FAST_CLUSTER_SETTINGS = {
  periodicTasksInitialDelayMs: 0,
  gossipIntervalMs: 200,
  leaderActionsIntervalMs: 200,
  unreachableNodesReaperIntervalMs: 200,
  heartbeatIntervalMs: 200,
  seedNodeTimeoutMs: 1_000,
  seedNodeInitJoinResendIntervalMs: 200,
  retryUnsuccessfulJoinAfterMs: 3_000,
  expectedResponseAfterMs: 500,
} as const satisfies ClusterOptions["settings"];

export const FAST_FAILURE_DETECTOR = {
  acceptableHeartbeatPauseMs: 1_000,
  firstHeartbeatEstimateMs: 200,
} as const satisfies ClusterOptions["failureDetector"];

export const SBR_STABLE_AFTER_MS = 2_000;

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
