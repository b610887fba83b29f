/**
 * The Split Brain Resolver before the cluster has first converged (docs/cluster.md,
 * "Formation and boot storms"). While a cluster forms, members are slow (starting
 * processes compete for the CPU) and the reachability view churns; a resolver acting on
 * it would down members that were only slow, and a single down-all-when-unstable on any
 * member ends the whole cluster.
 *
 * Rules (pure; the driver remembers whether it has converged once):
 * - a node counts the cluster as FIRST CONVERGED once it is itself up (or leaving,
 *   exiting): a leader moves a member up only on convergence, with the member in it, so
 *   the cluster has converged with this node at least once. (Requiring this node to have
 *   seen a converged view itself would be too strict: a member moved up just before a
 *   failure may never see one until the resolver removes the failed member — S20w seed 3
 *   deadlocked that way.) A forming cluster's first seed is up as soon as it forms alone;
 *   joining and weakly-up members are not;
 * - before that, its resolver does not down OTHER members, unless
 *   `downing.actBeforeFirstConvergence` is true;
 * - it may always down ITSELF: when a decision (including down-all) would down this node,
 *   this node is downed (and only it). Downing one's own side is the safe direction — a
 *   member on the losing side of a real partition still stops, so the majority's shard
 *   removal margin keeps holding.
 */
import type { MemberStatus } from "../membership/member-status.js";
import { type UniqueAddress, uniqueAddressEquals } from "../membership/unique-address.js";

/** Whether this own status means the cluster has first converged (see above). */
export function countsAsFirstConvergence(selfStatus: MemberStatus | undefined): boolean {
  return selfStatus === "up" || selfStatus === "leaving" || selfStatus === "exiting";
}

/** What the resolver may down now (see the module comment). */
export interface FormationGateOutcome {
  readonly down: readonly UniqueAddress[];
  /** Other members a decision wanted to down, withheld because not converged yet. */
  readonly withheld: readonly UniqueAddress[];
}

/** Applies the rule above to a decision that would down `down`. */
export function gateBeforeFirstConvergence(
  down: readonly UniqueAddress[],
  self: UniqueAddress,
  firstConverged: boolean,
  actBeforeFirstConvergence: boolean,
): FormationGateOutcome {
  if (firstConverged || actBeforeFirstConvergence) return { down, withheld: [] };
  const others = down.filter((n) => !uniqueAddressEquals(n, self));
  const includesSelf = others.length < down.length;
  return { down: includesSelf ? [self] : [], withheld: others };
}
