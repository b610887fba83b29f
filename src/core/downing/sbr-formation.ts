/**
 * The Split Brain Resolver before the cluster has first converged (docs/cluster.md,
 * "Formation and boot storms"). While a cluster forms, members are slow (starting
 * processes compete for the CPU) and the reachability view churns; a resolver acting on
 * it would down members that were only slow, and a single down-all-when-unstable on any
 * member ends the whole cluster.
 *
 * Rules (pure; the driver remembers whether it has converged once):
 * - a node has FIRST CONVERGED once it has seen a converged view in which it is itself
 *   up (or leaving/exiting); a forming cluster's first seed does so when it forms alone;
 * - before that, its resolver does not down OTHER members, unless
 *   `downing.actBeforeFirstConvergence` is true;
 * - it may always down ITSELF: when a decision (including down-all) would down this node,
 *   this node is downed (and only it). Downing one's own side is the safe direction — a
 *   member on the losing side of a real partition still stops, so the majority's shard
 *   removal margin keeps holding.
 */
import type { MemberStatus } from "../membership/member-status.js";
import { type UniqueAddress, uniqueAddressEquals } from "../membership/unique-address.js";

/** Whether a converged view with this own status counts as the first convergence. */
export function countsAsFirstConvergence(
  converged: boolean,
  selfStatus: MemberStatus | undefined,
): boolean {
  return converged && (selfStatus === "up" || selfStatus === "leaving" || selfStatus === "exiting");
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
