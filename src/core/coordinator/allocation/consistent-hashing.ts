/**
 * Consistent-hashing allocation: rendezvous (highest-random-weight) hashing of the shard
 * id over the region members' addresses. Each shard has a stable preferred region that
 * depends only on the shard id and the set of candidate addresses, so adding a region
 * moves only the ~1/N shards that now rank it highest, and removing one moves only its
 * own shards. Useful when shard placement should be predictable (cache locality, sticky
 * external resources) rather than perfectly balanced.
 *
 * Candidates are the regions in the best member class of region-preference.ts (not
 * departing, newest appVersion); load is not considered. weight(shard, region) =
 * murmur3_32(utf8(shardId), seed = murmur3(utf8(member.address))); the highest weight
 * wins, ties (astronomically rare) go to the smaller address, then the smaller regionId.
 *
 * Rebalance moves shards whose preferred region is not their current one, in shard-id
 * string order (independent of region order), bounded by `maxSimultaneousRebalance`
 * in flight, and only when the cluster is settled (rebalance-gate.ts).
 */
import { murmur3_32, murmur3OfString, utf8Encode } from "../../../base/hash.js";
import { int, type RulesOf, resolveSettings } from "../../../base/settings.js";
import type { ShardId } from "../../sharding/shard-id.js";
import { isGoodTimeToRebalance } from "./rebalance-gate.js";
import { compareRegionMembers } from "./region-preference.js";
import type { RebalanceClusterFacts, RegionView } from "./region-view.js";

/** Settings of the consistent-hashing rebalance. */
export interface ConsistentHashingSettings {
  /** Most shards being rebalanced at the same time. Integer >= 1. */
  readonly maxSimultaneousRebalance: number;
}

/** Defaults: at most 10 shards in flight. */
export const DEFAULT_CONSISTENT_HASHING_SETTINGS: ConsistentHashingSettings = Object.freeze({
  maxSimultaneousRebalance: 10,
});

const RULES: RulesOf<ConsistentHashingSettings> = {
  maxSimultaneousRebalance: int(1),
};

/** Defaults merged with `overrides`, validated (ConfigError names the key). */
export function resolveConsistentHashingSettings(
  overrides?: Partial<ConsistentHashingSettings>,
  prefix = "consistentHashingAllocation.",
): Readonly<ConsistentHashingSettings> {
  return resolveSettings(prefix, DEFAULT_CONSISTENT_HASHING_SETTINGS, RULES, overrides);
}

/** Rendezvous weight of `shardId` on the member at `address` (uint32). */
export function rendezvousWeight(shardId: ShardId, address: string): number {
  return murmur3_32(utf8Encode(shardId), murmur3OfString(address));
}

interface Candidate {
  readonly region: RegionView;
  readonly seed: number;
}

/** Regions in the best member class (not departing, newest version), in input order. */
function candidatesOf(regions: readonly RegionView[]): Candidate[] {
  let best: RegionView | undefined;
  for (const r of regions) if (best === undefined || compareRegionMembers(r, best) < 0) best = r;
  if (best === undefined) return [];
  const top = best;
  return regions
    .filter((r) => compareRegionMembers(r, top) === 0)
    .map((region) => ({ region, seed: murmur3OfString(region.member.address) }));
}

function beats(a: Candidate, wa: number, b: Candidate, wb: number): boolean {
  if (wa !== wb) return wa > wb;
  const [x, y] = [a.region, b.region];
  if (x.member.address !== y.member.address) return x.member.address < y.member.address;
  return x.regionId < y.regionId;
}

function preferredAmong(
  candidates: readonly Candidate[],
  shardId: ShardId,
): RegionView | undefined {
  const bytes = utf8Encode(shardId);
  let best: Candidate | undefined;
  let bestWeight = -1;
  for (const c of candidates) {
    const w = murmur3_32(bytes, c.seed);
    if (best === undefined || beats(c, w, best, bestWeight)) {
      best = c;
      bestWeight = w;
    }
  }
  return best?.region;
}

/** The region that should host `shardId`, or undefined if no region is known yet. */
export function consistentHashingAllocate(
  regions: readonly RegionView[],
  shardId: ShardId,
): RegionView | undefined {
  return preferredAmong(candidatesOf(regions), shardId);
}

/** Shards not on their preferred region, in string order, bounded; empty when blocked. */
export function consistentHashingRebalance(
  regions: readonly RegionView[],
  inProgress: ReadonlySet<ShardId>,
  settings: ConsistentHashingSettings,
  cluster: RebalanceClusterFacts,
): ReadonlySet<ShardId> {
  const { maxSimultaneousRebalance } = resolveConsistentHashingSettings(settings);
  const budget = maxSimultaneousRebalance - inProgress.size;
  if (budget <= 0 || !isGoodTimeToRebalance(regions, cluster)) return new Set();
  const candidates = candidatesOf(regions);
  const misplaced: ShardId[] = [];
  for (const r of regions) {
    for (const s of r.shards) {
      if (inProgress.has(s)) continue;
      if (preferredAmong(candidates, s)?.regionId !== r.regionId) misplaced.push(s);
    }
  }
  misplaced.sort((a, b) => (a === b ? 0 : a < b ? -1 : 1));
  return new Set(misplaced.slice(0, budget));
}
