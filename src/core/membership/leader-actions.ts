/**
 * The leader's duties (docs/cluster.md, "Gossip and convergence"), as a pure
 * function of one node's membership view. Run periodically by the driver; it acts only
 * when the self node is the leader of its data center.
 *
 * With convergence (every member that must have seen the current gossip has seen it):
 * - joining / weakly-up -> up, once the cluster has minNrOfMembers members and every
 *   role has its roleMinNrOfMembers; up-numbers continue from the youngest member's
 *   up-number and are handed out in member (address) order; at most
 *   `maxMembersUpPerRound` per run (a boot storm moves up in batches, each after a
 *   convergence; docs/cluster.md "Formation and boot storms");
 * - leaving -> exiting;
 * - exiting -> removed when the exiting node has confirmed (exitingConfirmed), has itself
 *   seen the converged gossip in which it is exiting (so every node has seen exiting,
 *   as the membership protocol requires), or is unreachable (it has shut down);
 * - down -> removed once it is unreachable (a downed node that is still running sees its
 *   status, shuts down and then becomes unreachable);
 * removals leave a tombstone stamped `nowMs`, so a removed incarnation never returns.
 *
 * Without convergence (and only when the driver says the allowWeaklyUpMembersMs delay
 * has elapsed) joining members that are reachable move to weakly-up, subject to the same
 * minimum-member rules; nothing else happens until convergence.
 *
 * Every change produces one new gossip: version incremented at the leader's clock key,
 * seen by the leader only. No timer, no clock: time and the weakly-up verdict are inputs.
 */

import { type ClusterEvent, diffClusterEvents } from "./cluster-events.js";
import {
  clearSeen,
  clockKeyOf,
  type Gossip,
  hasMember,
  incrementVersion,
  removeMember,
  seenByNode,
  updateMembers,
  withOnlySeen,
} from "./gossip.js";
import { hasRole, type Member, UP_NUMBER_UNASSIGNED, withStatus, withStatusUp } from "./member.js";
import {
  convergence,
  dcMembers,
  dcReachability,
  dcReachabilityExcludingDownedObservers,
  gossipTargetsForExitingMembers,
  isLeader,
  type MembershipState,
  withLatestGossip,
  youngestMember,
} from "./membership-state.js";
import { allUnreachableOrTerminated, isReachable } from "./reachability.js";
import {
  type UniqueAddress,
  uniqueAddressEquals,
  uniqueAddressToString,
} from "./unique-address.js";

/** Inputs of one leader-actions run besides the view. */
export interface LeaderActionsInput {
  /** Cluster size (members of the self DC, any status) required before anyone moves up. */
  readonly minNrOfMembers: number;
  /** Per role, members with that role required before anyone moves up. */
  readonly roleMinNrOfMembers?: Readonly<Record<string, number>>;
  /** Whether weakly-up is enabled at all (allowWeaklyUpMembersMs > 0). */
  readonly allowWeaklyUp: boolean;
  /** The driver's verdict: the leader has been unable to converge for allowWeaklyUpMembersMs. */
  readonly weaklyUpDelayElapsed: boolean;
  /** Exiting nodes that told the leader they have seen themselves exiting. */
  readonly exitingConfirmed?: Iterable<UniqueAddress>;
  /** Now, in the caller's clock; stamps the tombstones of removed members. */
  readonly nowMs: number;
  /** Most joining / weakly-up members moved to up (and joining members moved to
   * weakly-up) in one run, in member order; 0 or absent = all of them. */
  readonly maxMembersUpPerRound?: number;
}

/** Why a run changed nothing. */
export const LeaderActionsSkipReason = {
  NotLeader: "not-leader",
  NoConvergence: "no-convergence",
  NothingToDo: "nothing-to-do",
} as const;

/** Why a run changed nothing. */
export type LeaderActionsSkipReason =
  (typeof LeaderActionsSkipReason)[keyof typeof LeaderActionsSkipReason];

/** Outcome of one leader-actions run. */
export type LeaderActionsResult =
  | { readonly type: "none"; readonly reason: LeaderActionsSkipReason }
  | {
      readonly type: "changed";
      /** Which duty ran: the convergence actions or the weakly-up move. */
      readonly path: "convergence" | "weakly-up";
      /** The view with the new gossip (version bumped by the leader, seen by it only). */
      readonly state: MembershipState;
      /** What changed, in the order of cluster-events.ts. */
      readonly events: readonly ClusterEvent[];
      /** Gossip the new state to these nodes now (members that just became exiting:
       * their potential singleton successors), sorted, self excluded. */
      readonly exitingGossipTargets: readonly UniqueAddress[];
      /** Confirmed exiting nodes that were removed; the driver forgets their confirmation. */
      readonly removedExitingConfirmed: readonly UniqueAddress[];
    };

const key = uniqueAddressToString;

/**
 * The leader's actions for the view `state` (see the module comment). Returns "none"
 * with a reason when the self node is not the leader or there is nothing to change.
 */
export function leaderActions(
  state: MembershipState,
  input: LeaderActionsInput,
): LeaderActionsResult {
  if (!isLeader(state, state.selfUniqueAddress))
    return { type: "none", reason: LeaderActionsSkipReason.NotLeader };
  if (convergence(state, input.exitingConfirmed ?? [])) return onConvergence(state, input);
  if (input.allowWeaklyUp && input.weaklyUpDelayElapsed) return maybeMoveToWeaklyUp(state, input);
  return { type: "none", reason: LeaderActionsSkipReason.NoConvergence };
}

/** True if the self DC has enough members overall and per role to move members up. */
export function isMinNrOfMembersFulfilled(
  state: MembershipState,
  minNrOfMembers: number,
  roleMinNrOfMembers: Readonly<Record<string, number>> = {},
): boolean {
  const members = dcMembers(state);
  if (members.length < minNrOfMembers) return false;
  return Object.entries(roleMinNrOfMembers).every(
    ([role, min]) => members.filter((m) => hasRole(m, role)).length >= min,
  );
}

function removableOnConvergence(state: MembershipState, confirmed: ReadonlySet<string>): Member[] {
  const g = state.latestGossip;
  const unreachable = new Set(allUnreachableOrTerminated(dcReachability(state)).map(key));
  return g.members.filter((m) => {
    if (m.dataCenter !== state.selfDc) return false;
    const k = key(m.uniqueAddress);
    if (m.status === "down") return unreachable.has(k);
    if (m.status !== "exiting") return false;
    return unreachable.has(k) || confirmed.has(k) || seenByNode(g, m.uniqueAddress);
  });
}

function changedOnConvergence(state: MembershipState, input: LeaderActionsInput): Member[] {
  const enough = isMinNrOfMembersFulfilled(state, input.minNrOfMembers, input.roleMinNrOfMembers);
  const youngest = youngestMember(state)?.upNumber ?? 0;
  let upNumber = youngest === UP_NUMBER_UNASSIGNED ? 0 : youngest;
  let upBudget = batchOf(input);
  const changed: Member[] = [];
  for (const m of state.latestGossip.members) {
    if (m.dataCenter !== state.selfDc) continue;
    if ((m.status === "joining" || m.status === "weakly-up") && enough && upBudget > 0) {
      upBudget -= 1;
      upNumber += 1;
      changed.push(withStatusUp(m, upNumber));
    } else if (m.status === "leaving") {
      changed.push(withStatus(m, "exiting"));
    }
  }
  return changed;
}

function onConvergence(state: MembershipState, input: LeaderActionsInput): LeaderActionsResult {
  const confirmed = new Set([...(input.exitingConfirmed ?? [])].map(key));
  const removed = removableOnConvergence(state, confirmed);
  const changed = changedOnConvergence(state, input);
  if (removed.length === 0 && changed.length === 0)
    return { type: "none", reason: LeaderActionsSkipReason.NothingToDo };
  let g = updateMembers(state.latestGossip, changed);
  for (const m of removed) g = removeMember(g, m.uniqueAddress, input.nowMs);
  const next = withLatestGossip(state, stampLocalChange(g, state.selfUniqueAddress));
  const exiting = changed.filter((m) => m.status === "exiting");
  const targets = gossipTargetsForExitingMembers(next, exiting)
    .map((m) => m.uniqueAddress)
    .filter((n) => !uniqueAddressEquals(n, state.selfUniqueAddress));
  return {
    type: "changed",
    path: "convergence",
    state: next,
    events: diffClusterEvents(state, next),
    exitingGossipTargets: targets,
    removedExitingConfirmed: removed
      .filter((m) => confirmed.has(key(m.uniqueAddress)))
      .map((m) => m.uniqueAddress),
  };
}

function maybeMoveToWeaklyUp(
  state: MembershipState,
  input: LeaderActionsInput,
): LeaderActionsResult {
  const enough = isMinNrOfMembersFulfilled(state, input.minNrOfMembers, input.roleMinNrOfMembers);
  const reachability = dcReachabilityExcludingDownedObservers(state);
  const changed = enough
    ? state.latestGossip.members
        .filter(
          (m) =>
            m.dataCenter === state.selfDc &&
            m.status === "joining" &&
            isReachable(reachability, m.uniqueAddress),
        )
        .slice(0, batchOf(input))
        .map((m) => withStatus(m, "weakly-up"))
    : [];
  if (changed.length === 0) return { type: "none", reason: LeaderActionsSkipReason.NoConvergence };
  const g = updateMembers(state.latestGossip, changed);
  const next = withLatestGossip(state, stampLocalChange(g, state.selfUniqueAddress));
  return {
    type: "changed",
    path: "weakly-up",
    state: next,
    events: diffClusterEvents(state, next),
    exitingGossipTargets: [],
    removedExitingConfirmed: [],
  };
}

/** How many members one run may move up (or to weakly-up). */
function batchOf(input: LeaderActionsInput): number {
  const max = input.maxMembersUpPerRound ?? 0;
  return max > 0 ? max : Number.POSITIVE_INFINITY;
}

/** A local change by `self`: version bumped at its clock key, seen by it alone. */
export function stampLocalChange(g: Gossip, self: UniqueAddress): Gossip {
  const versioned = incrementVersion(g, clockKeyOf(self));
  // A leader that just removed itself (it was the last exiting member) is no member.
  return hasMember(versioned, self) ? withOnlySeen(versioned, self) : clearSeen(versioned);
}
