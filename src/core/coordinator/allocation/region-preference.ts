/**
 * Which region should host a shard: the region-preference order shared by every
 * allocation strategy. "Smaller" means more suitable:
 *   1. regions on departing members (leaving, exiting, down, removed) come last;
 *   2. then the higher appVersion first, so during a rolling update new shards land on
 *      the new release and need not move again;
 *   3. then fewer hosted shards first.
 * Ties keep the input (registration) order: sorting is stable and `mostPreferredRegion`
 * returns the earliest of the equally suitable regions.
 *
 * Intended difference from Akka/Pekko: Pekko stops at tier 1 whenever the two statuses
 * differ, even when both are on the same side (Up vs Joining compare EQUAL there, whatever
 * their versions and loads). shardkit always applies tiers 2 and 3 within a side. That
 * makes the comparator a consistent total preorder (Pekko's is not transitive), so a
 * stable sort has one well-defined result, and a lightly loaded region is never passed
 * over just because its member is still weakly-up. No reference vector depends on it.
 */
import { compareAppVersion } from "../../../base/app-version.js";
import type { MemberStatus } from "../../membership/member-status.js";
import type { RegionView } from "./region-view.js";

/** True for statuses whose member is going away; its regions are least preferred. */
export function isDepartingStatus(status: MemberStatus): boolean {
  return status === "leaving" || status === "exiting" || status === "down" || status === "removed";
}

/** Tiers 1 and 2 only (departing, then version): equal means "same class of member". */
export function compareRegionMembers(a: RegionView, b: RegionView): number {
  const departingA = isDepartingStatus(a.member.status);
  const departingB = isDepartingStatus(b.member.status);
  if (departingA !== departingB) return departingA ? 1 : -1;
  return compareAppVersion(b.member.appVersion, a.member.appVersion);
}

/** Full preference order: negative if `a` is more suitable than `b`. */
export function compareRegionPreference(a: RegionView, b: RegionView): number {
  const byMember = compareRegionMembers(a, b);
  if (byMember !== 0) return byMember;
  return a.shards.length - b.shards.length;
}

/** A new array sorted most-suitable first; stable (ties keep input order). */
export function sortRegionsByPreference(regions: readonly RegionView[]): RegionView[] {
  return [...regions].sort(compareRegionPreference);
}

/** The most suitable region (earliest on ties), or undefined when there is none. */
export function mostPreferredRegion(regions: readonly RegionView[]): RegionView | undefined {
  let best: RegionView | undefined;
  for (const r of regions) {
    if (best === undefined || compareRegionPreference(r, best) < 0) best = r;
  }
  return best;
}
