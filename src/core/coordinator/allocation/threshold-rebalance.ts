/**
 * The older threshold-based rebalance (Akka/Pekko's deprecated `LeastShardAllocationStrategy
 * (rebalanceThreshold, maxSimultaneousRebalance)`), kept for users migrating settings.
 * Allocation is the same as least-shard (most preferred region).
 *
 * Each call moves shards from the most loaded region towards the most preferred one when
 * their difference exceeds `rebalanceThreshold`; shards already being rebalanced are
 * skipped, up to `maxSimultaneousRebalance` in flight. Faithful to the reference quirks:
 * the donor's shards are taken in STRING order (not allocation order), and the in-progress
 * shards are removed from the donor's count but NOT from the receiving region's count.
 * It converges more slowly than least-shard and can leave max - min = threshold.
 */
import { int, type RulesOf, resolveSettings } from "../../../base/settings.js";
import type { ShardId } from "../../sharding/shard-id.js";
import { isGoodTimeToRebalance } from "./rebalance-gate.js";
import { sortRegionsByPreference } from "./region-preference.js";
import type { RebalanceClusterFacts, RegionView } from "./region-view.js";

/** Settings of the deprecated threshold rebalance. */
export interface ThresholdRebalanceSettings {
  /** Move shards only when most - least exceeds this. Integer >= 1. */
  readonly rebalanceThreshold: number;
  /** Most shards being rebalanced at the same time. Integer >= 1. */
  readonly maxSimultaneousRebalance: number;
}

/** Defaults (the classic Akka values). */
export const DEFAULT_THRESHOLD_REBALANCE_SETTINGS: ThresholdRebalanceSettings = Object.freeze({
  rebalanceThreshold: 1,
  maxSimultaneousRebalance: 3,
});

const RULES: RulesOf<ThresholdRebalanceSettings> = {
  rebalanceThreshold: int(1),
  maxSimultaneousRebalance: int(1),
};

/** Defaults merged with `overrides`, validated (ConfigError names the key). */
export function resolveThresholdRebalanceSettings(
  overrides?: Partial<ThresholdRebalanceSettings>,
  prefix = "thresholdAllocation.",
): Readonly<ThresholdRebalanceSettings> {
  return resolveSettings(prefix, DEFAULT_THRESHOLD_REBALANCE_SETTINGS, RULES, overrides);
}

/** Shards to move now (string order); empty when blocked or balanced enough. */
export function thresholdRebalance(
  regions: readonly RegionView[],
  inProgress: ReadonlySet<ShardId>,
  settings: ThresholdRebalanceSettings,
  cluster: RebalanceClusterFacts,
): ReadonlySet<ShardId> {
  const { rebalanceThreshold, maxSimultaneousRebalance } =
    resolveThresholdRebalanceSettings(settings);
  if (inProgress.size >= maxSimultaneousRebalance) return new Set();
  const sorted = sortRegionsByPreference(regions);
  if (!isGoodTimeToRebalance(sorted, cluster)) return new Set();
  const leastCount = (sorted[0] as RegionView).shards.length;
  const most = mostLoadedExcluding(sorted, inProgress);
  const diff = most.length - leastCount;
  if (diff <= rebalanceThreshold) return new Set();
  const n = Math.min(
    diff - rebalanceThreshold,
    rebalanceThreshold,
    maxSimultaneousRebalance - inProgress.size,
  );
  return new Set([...most].sort(compareStrings).slice(0, n));
}

/** The largest shard list once `excluded` is removed; the earliest region wins ties. */
function mostLoadedExcluding(
  sorted: readonly RegionView[],
  excluded: ReadonlySet<ShardId>,
): ShardId[] {
  let most: ShardId[] | undefined;
  for (const r of sorted) {
    const candidates = r.shards.filter((s) => !excluded.has(s));
    if (most === undefined || candidates.length > most.length) most = candidates;
  }
  return most ?? [];
}

function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  return a < b ? -1 : 1;
}
