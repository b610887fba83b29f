/**
 * Settings of cluster membership: gossip, leader actions, joining through seed nodes,
 * weakly-up, heartbeats and failure-detector monitoring (docs/cluster.md, "Settings"). One
 * object, defaulted and validated in one place (docs/architecture.md, house rule 2): every interval
 * and timeout carries its unit in its name, and a bad value fails at startup with a
 * ConfigError naming the key.
 *
 * The core machines never read timers: the driver schedules the intervals below and
 * feeds the elapsed facts (a timeout fired, the weakly-up delay elapsed) as inputs.
 */
import { ConfigError } from "../../base/errors.js";
import { int, ms, num, type Rule, type RulesOf, resolveSettings } from "../../base/settings.js";

/** Settings of cluster membership (all durations in milliseconds). */
export interface ClusterSettings {
  /** How often a node starts a gossip round. > 0. */
  readonly gossipIntervalMs: number;
  /** Gossip that waited longer than this before being handled is dropped (overload
   * protection of the receiver). > 0. */
  readonly gossipTimeToLiveMs: number;
  /** Probability of gossiping to a member that has not seen the current version. [0, 1]. */
  readonly gossipDifferentViewProbability: number;
  /** Above this many members the different-view probability is reduced linearly (down to
   * a tenth of it at three times this size), so stragglers are not flooded. >= 1. */
  readonly reduceGossipDifferentViewProbabilityAboveMembers: number;
  /** How often the leader runs its actions. > 0. */
  readonly leaderActionsIntervalMs: number;
  /** How often the failure detector verdicts are turned into reachability rows. > 0. */
  readonly unreachableNodesReaperIntervalMs: number;
  /** Delay before the periodic tasks above start. >= 0. */
  readonly periodicTasksInitialDelayMs: number;
  /** How long a joining node waits for InitJoinAck from the seed nodes before it retries
   * (the first seed node: before it joins itself). > 0. */
  readonly seedNodeTimeoutMs: number;
  /** How often the first seed node re-sends InitJoin while it waits. > 0. */
  readonly seedNodeInitJoinResendIntervalMs: number;
  /** Restart the seed-node process when no Welcome arrived this long after Join;
   * 0 = never retry. >= 0. */
  readonly retryUnsuccessfulJoinAfterMs: number;
  /** The leader moves joining members up only when the cluster has at least this many
   * members. >= 1. */
  readonly minNrOfMembers: number;
  /** Per role: at least this many members with the role before anyone moves up. */
  readonly roleMinNrOfMembers: Readonly<Record<string, number>>;
  /** Without convergence, the leader moves joining members to weakly-up after it has been
   * unable to converge this long; 0 = weakly-up disabled. >= 0. */
  readonly allowWeaklyUpMembersMs: number;
  /** How often a node sends a heartbeat to each of the peers it monitors. > 0. */
  readonly heartbeatIntervalMs: number;
  /** How many peers monitor each member (taken from the hashed ring). >= 1. */
  readonly monitoredByNrOfMembers: number;
  /** After a heartbeat without answer for this long, the first heartbeat expectation is
   * registered with the failure detector. > 0. */
  readonly expectedResponseAfterMs: number;
  /** Extra wait after a downed member is removed before its shards and singletons are
   * started elsewhere. >= 0. */
  readonly downRemovalMarginMs: number;
  /** Tombstones of removed members are dropped from the gossip after this long. > 0. */
  readonly pruneGossipTombstonesAfterMs: number;
  /** A removed member's incarnation is quarantined in remoting this long after removal
   * (time for the final gossip to reach it); it can never talk to the cluster again. > 0. */
  readonly quarantineRemovedNodeAfterMs: number;
  /** While this node is not a member yet, it logs at warn, at most once per this interval,
   * what it is trying and why it fails (per seed node). > 0. */
  readonly joinDiagnosticsIntervalMs: number;
  /** Join requests a member admits per second (a token bucket holding one second's
   * worth); the rest wait in a queue (boot storms). 0 = unbounded. >= 0. */
  readonly maxJoinsAdmittedPerSecond: number;
  /** Most join requests waiting for admission; more are dropped (the joiner retries
   * after retryUnsuccessfulJoinAfterMs). Integer >= 1. */
  readonly joinAdmissionQueueMax: number;
  /** Most members the leader moves to up (or to weakly-up) per round of leader
   * actions; the next batch follows the next convergence. 0 = unbounded. Integer >= 0. */
  readonly maxMembersUpPerLeaderRound: number;
  /** Own stalls (timer lateness, event-loop delay) shorter than this are ignored;
   * longer ones do not count against monitored members (self-aware failure detection).
   * >= 0. */
  readonly selfStallIgnoredBelowMs: number;
}

/** Defaults (docs/cluster.md, "Settings"; the gossip probabilities follow Akka's). */
export const DEFAULT_CLUSTER_SETTINGS: ClusterSettings = Object.freeze({
  gossipIntervalMs: 1000,
  gossipTimeToLiveMs: 2000,
  gossipDifferentViewProbability: 0.8,
  reduceGossipDifferentViewProbabilityAboveMembers: 400,
  leaderActionsIntervalMs: 1000,
  unreachableNodesReaperIntervalMs: 1000,
  periodicTasksInitialDelayMs: 1000,
  seedNodeTimeoutMs: 5000,
  seedNodeInitJoinResendIntervalMs: 1000,
  retryUnsuccessfulJoinAfterMs: 10_000,
  minNrOfMembers: 1,
  roleMinNrOfMembers: Object.freeze({}),
  allowWeaklyUpMembersMs: 7000,
  heartbeatIntervalMs: 1000,
  monitoredByNrOfMembers: 9,
  expectedResponseAfterMs: 1000,
  downRemovalMarginMs: 0,
  pruneGossipTombstonesAfterMs: 86_400_000,
  quarantineRemovedNodeAfterMs: 5_000,
  joinDiagnosticsIntervalMs: 5_000,
  maxJoinsAdmittedPerSecond: 20,
  joinAdmissionQueueMax: 1_000,
  maxMembersUpPerLeaderRound: 20,
  selfStallIgnoredBelowMs: 100,
});

/** A duration strictly greater than zero. */
function positiveMs(): Rule<number> {
  return (key, value) => {
    if (typeof value !== "number" || !Number.isFinite(value) || value <= 0)
      throw new ConfigError(key, value, "a duration in milliseconds > 0");
    return value;
  };
}

/** `{ role: count }` with non-empty role names and integer counts >= 1. */
function roleCounts(): Rule<Readonly<Record<string, number>>> {
  return (key, value) => {
    if (typeof value !== "object" || value === null || Array.isArray(value))
      throw new ConfigError(key, value, "an object { role: count }");
    const out: Record<string, number> = {};
    for (const [role, count] of Object.entries(value as Record<string, unknown>)) {
      if (role === "") throw new ConfigError(key, value, "non-empty role names");
      out[role] = int(1)(`${key}.${role}`, count);
    }
    return Object.freeze(out);
  };
}

const RULES: RulesOf<ClusterSettings> = {
  gossipIntervalMs: positiveMs(),
  gossipTimeToLiveMs: positiveMs(),
  gossipDifferentViewProbability: num(0, 1),
  reduceGossipDifferentViewProbabilityAboveMembers: int(1),
  leaderActionsIntervalMs: positiveMs(),
  unreachableNodesReaperIntervalMs: positiveMs(),
  periodicTasksInitialDelayMs: ms(0),
  seedNodeTimeoutMs: positiveMs(),
  seedNodeInitJoinResendIntervalMs: positiveMs(),
  retryUnsuccessfulJoinAfterMs: ms(0),
  minNrOfMembers: int(1),
  roleMinNrOfMembers: roleCounts(),
  allowWeaklyUpMembersMs: ms(0),
  heartbeatIntervalMs: positiveMs(),
  monitoredByNrOfMembers: int(1),
  expectedResponseAfterMs: positiveMs(),
  downRemovalMarginMs: ms(0),
  pruneGossipTombstonesAfterMs: positiveMs(),
  quarantineRemovedNodeAfterMs: positiveMs(),
  joinDiagnosticsIntervalMs: positiveMs(),
  maxJoinsAdmittedPerSecond: num(0, 1_000_000),
  joinAdmissionQueueMax: int(1, 1_000_000),
  maxMembersUpPerLeaderRound: int(0),
  selfStallIgnoredBelowMs: ms(0),
};

/**
 * Defaults merged with `overrides`, validated. Throws ConfigError (key prefixed with
 * `prefix`) on an invalid or unknown key.
 */
export function resolveClusterSettings(
  overrides?: Partial<ClusterSettings>,
  prefix = "cluster.",
): Readonly<ClusterSettings> {
  return resolveSettings(prefix, DEFAULT_CLUSTER_SETTINGS, RULES, overrides);
}

/** True if the weakly-up path is enabled (allowWeaklyUpMembersMs > 0). */
export function isWeaklyUpAllowed(settings: ClusterSettings): boolean {
  return settings.allowWeaklyUpMembersMs > 0;
}
