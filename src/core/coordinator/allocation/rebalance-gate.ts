/**
 * When rebalancing is allowed at all. Moving shards while membership is in flux would
 * move them twice (once now, again when the joining node is up or the unreachable one is
 * downed), and moving them during a rolling update would bounce them between versions.
 * So every rebalance strategy returns nothing unless the cluster is settled.
 */
import { compareAppVersion } from "../../../base/app-version.js";
import type { RebalanceClusterFacts, RegionView } from "./region-view.js";

/** True if all regions run the same appVersion (members without regions are ignored). */
export function regionsHaveSameAppVersion(regions: readonly RegionView[]): boolean {
  const first = regions[0];
  if (first === undefined) return true;
  return regions.every(
    (r) => compareAppVersion(r.member.appVersion, first.member.appVersion) === 0,
  );
}

/**
 * True iff there is at least one region, all regions run the same appVersion, and no
 * member of the coordinator's data center is unreachable, joining or weakly-up.
 */
export function isGoodTimeToRebalance(
  regions: readonly RegionView[],
  cluster: RebalanceClusterFacts,
): boolean {
  return (
    regions.length > 0 &&
    regionsHaveSameAppVersion(regions) &&
    !cluster.hasUnreachableMember &&
    !cluster.hasJoiningMember
  );
}
