/**
 * Least-shard allocation with the two-phase, limited rebalance (shardkit's default
 * strategy; Akka/Pekko `LeastShardAllocationStrategy` with absolute and relative limits).
 *
 * Allocation: a new shard goes to the most preferred region (region-preference.ts).
 * Rebalance, only when the cluster is settled and no rebalance is in progress:
 *   optimal = ceil(N / R) for N shards on R regions;
 *   limit   = max(1, min(trunc(relativeLimit * N), absoluteLimit)).
 *   Phase 1: every region above `optimal` gives up its OLDEST (front of list) shards down
 *            to `optimal`, walking regions in preference order; keep the first `limit`.
 *   Phase 2: only if phase 1 found nothing, and some region is at least 2 below optimal:
 *            each region at `optimal` gives its oldest shard, at most min(deficit, limit).
 * Repeated rounds converge to max - min <= 1 while moving few shards per round: the
 * limits bound how many entities are stopped and restarted at once.
 */
import { ConfigError } from "../../../base/errors.js";
import { int, type Rule, type RulesOf, resolveSettings } from "../../../base/settings.js";
import type { ShardId } from "../../sharding/shard-id.js";
import { isGoodTimeToRebalance } from "./rebalance-gate.js";
import { mostPreferredRegion, sortRegionsByPreference } from "./region-preference.js";
import type { RebalanceClusterFacts, RegionView } from "./region-view.js";

/** Per-round limits of the least-shard rebalance. */
export interface LeastShardSettings {
  /** Most shards moved in one rebalance round. Integer >= 1. */
  readonly absoluteLimit: number;
  /** Most shards moved in one round as a fraction of all shards, in (0, 1]. */
  readonly relativeLimit: number;
}

/** Defaults: at most 20 shards, and at most 10% of all shards, per round. */
export const DEFAULT_LEAST_SHARD_SETTINGS: LeastShardSettings = Object.freeze({
  absoluteLimit: 20,
  relativeLimit: 0.1,
});

const fraction: Rule<number> = (key, value) => {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0 || value > 1)
    throw new ConfigError(key, value, "a number in (0, 1]");
  return value;
};

const RULES: RulesOf<LeastShardSettings> = {
  absoluteLimit: int(1),
  relativeLimit: fraction,
};

/** Defaults merged with `overrides`, validated (ConfigError names the key). */
export function resolveLeastShardSettings(
  overrides?: Partial<LeastShardSettings>,
  prefix = "leastShardAllocation.",
): Readonly<LeastShardSettings> {
  return resolveSettings(prefix, DEFAULT_LEAST_SHARD_SETTINGS, RULES, overrides);
}

/** The region that should host a new shard, or undefined if no region is known yet. */
export function leastShardAllocate(regions: readonly RegionView[]): RegionView | undefined {
  return mostPreferredRegion(regions);
}

/** Shards to move this round (insertion order = selection order); empty when blocked. */
export function leastShardRebalance(
  regions: readonly RegionView[],
  inProgress: ReadonlySet<ShardId>,
  settings: LeastShardSettings,
  cluster: RebalanceClusterFacts,
): ReadonlySet<ShardId> {
  const { absoluteLimit, relativeLimit } = resolveLeastShardSettings(settings);
  if (inProgress.size > 0) return new Set();
  const sorted = sortRegionsByPreference(regions);
  if (!isGoodTimeToRebalance(sorted, cluster)) return new Set();
  const total = sorted.reduce((n, r) => n + r.shards.length, 0);
  if (total === 0) return new Set();
  const optimal = Math.ceil(total / sorted.length);
  const limit = Math.max(1, Math.min(Math.trunc(relativeLimit * total), absoluteLimit));
  const phase1 = takeAboveOptimal(sorted, optimal, limit);
  if (phase1.length > 0) return new Set(phase1);
  return new Set(takeTowardsBelowOptimal(sorted, optimal, limit));
}

/** Phase 1: the oldest shards of every region above `optimal`, at most `limit`. */
function takeAboveOptimal(
  sorted: readonly RegionView[],
  optimal: number,
  limit: number,
): ShardId[] {
  const out: ShardId[] = [];
  for (const r of sorted) {
    const excess = r.shards.length - optimal;
    for (let i = 0; i < excess && out.length < limit; i++) out.push(r.shards[i] as ShardId);
    if (out.length >= limit) break;
  }
  return out;
}

/** Phase 2: one shard from each region at `optimal`, bounded by the total deficit. */
function takeTowardsBelowOptimal(
  sorted: readonly RegionView[],
  optimal: number,
  limit: number,
): ShardId[] {
  const deficit = sorted.reduce((n, r) => n + Math.max(0, optimal - 1 - r.shards.length), 0);
  if (deficit === 0) return [];
  const max = Math.min(deficit, limit);
  const out: ShardId[] = [];
  for (const r of sorted) {
    if (out.length >= max) break;
    const first = r.shards[0];
    if (r.shards.length >= optimal && first !== undefined) out.push(first);
  }
  return out;
}
