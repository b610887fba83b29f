/**
 * Joining a cluster (docs/cluster.md, "Joining"): the pure
 * handling of Join, Welcome and InitJoin on the node that receives them. The seed-node
 * conversation of the joining side is seed-join.ts.
 *
 * Rules:
 * - Join is refused from another protocol or actor-system name, by a node that has not
 *   joined a cluster itself (unless it joins itself), by a down or exiting node, from an
 *   incarnation that was removed (tombstoned) or downed: a downed or removed incarnation
 *   never comes back (docs/cluster.md).
 * - Join from a NEW incarnation (other uid) of a host:port that is still a member: the
 *   old incarnation is marked terminated by self and downed; the leader removes it once
 *   it is unreachable, and the new incarnation is admitted when it retries after that.
 * - Join from the same incarnation that is already a member (a lost Welcome): Welcome
 *   again, nothing changes.
 * - Otherwise the node is added as joining; the gossip version is bumped at self's
 *   clock key and seen by self only; the joiner gets a Welcome with that gossip. Self
 *   joining itself on an empty view forms a new cluster.
 * - Welcome is accepted only by a node that has not joined yet, only from the node it
 *   sent Join to, and only when the gossip contains it.
 * - InitJoin is acked by a joined node that is not down or exiting, nacked otherwise.
 */
import { type Address, addressEquals } from "./address.js";
import { type ClusterEvent, diffClusterEvents } from "./cluster-events.js";
import {
  addMember,
  findMember,
  type Gossip,
  hasMember,
  hasTombstone,
  markAsDown,
  withReachability,
} from "./gossip.js";
import { stampLocalChange } from "./leader-actions.js";
import { createMember } from "./member.js";
import {
  type MembershipState,
  markSeenBySelf,
  selfMember,
  withLatestGossip,
} from "./membership-state.js";
import { markTerminated } from "./reachability.js";
import { type UniqueAddress, uniqueAddressEquals } from "./unique-address.js";

/** A node asks to join. */
export interface JoinRequest {
  readonly node: UniqueAddress;
  readonly roles?: Iterable<string>;
  readonly appVersion?: string;
  readonly dataCenter?: string;
}

/** The answer to an accepted Join: the joiner's first gossip. */
export interface Welcome {
  readonly from: UniqueAddress;
  readonly gossip: Gossip;
}

/** Why a Join was refused (or needs no change). */
export const JoinRefusedReason = {
  ProtocolMismatch: "protocol-mismatch",
  SystemMismatch: "system-mismatch",
  /** Self has not joined a cluster and the joiner is not self. */
  NotInitialized: "not-initialized",
  SelfDownOrExiting: "self-down-or-exiting",
  /** The incarnation was removed. */
  Tombstoned: "tombstoned",
  /** The incarnation was downed. */
  Downed: "downed",
  /** Self joining itself again. */
  SelfAlreadyMember: "self-already-member",
  /** A new incarnation whose predecessor is down but not yet removed: retry later. */
  OldIncarnationPendingRemoval: "old-incarnation-pending-removal",
} as const;

/** Why a Join was refused (or needs no change). */
export type JoinRefusedReason = (typeof JoinRefusedReason)[keyof typeof JoinRefusedReason];

/** Outcome of a Join. */
export type JoinOutcome =
  | { readonly type: "refused"; readonly reason: JoinRefusedReason }
  /** The same incarnation retried: send this Welcome again. */
  | { readonly type: "welcome-again"; readonly welcome: Welcome }
  /** A new incarnation: its predecessor was downed; the joiner must retry later. */
  | {
      readonly type: "downed-old-incarnation";
      readonly old: UniqueAddress;
      readonly state: MembershipState;
      readonly events: readonly ClusterEvent[];
    }
  | {
      readonly type: "joined";
      readonly state: MembershipState;
      /** To send to the joiner; undefined when self joined itself. */
      readonly welcome: Welcome | undefined;
      /** Self joined itself on an empty view: run leader actions now (first up-number). */
      readonly formedNewCluster: boolean;
      readonly events: readonly ClusterEvent[];
    };

function refusal(state: MembershipState, request: JoinRequest): JoinRefusedReason | undefined {
  const self = state.selfUniqueAddress;
  const joiner = request.node;
  if (joiner.address.protocol !== self.address.protocol) return JoinRefusedReason.ProtocolMismatch;
  if (joiner.address.system !== self.address.system) return JoinRefusedReason.SystemMismatch;
  const me = selfMember(state);
  const joiningSelf = uniqueAddressEquals(joiner, self);
  if (me === undefined && !joiningSelf) return JoinRefusedReason.NotInitialized;
  if (me !== undefined && joiningSelf) return JoinRefusedReason.SelfAlreadyMember;
  if (me !== undefined && (me.status === "down" || me.status === "exiting"))
    return JoinRefusedReason.SelfDownOrExiting;
  if (hasTombstone(state.latestGossip, joiner)) return JoinRefusedReason.Tombstoned;
  if (findMember(state.latestGossip, joiner)?.status === "down") return JoinRefusedReason.Downed;
  return undefined;
}

/** Handles a Join received by the self node (see the module comment). */
export function onJoin(state: MembershipState, request: JoinRequest): JoinOutcome {
  const reason = refusal(state, request);
  if (reason !== undefined) return { type: "refused", reason };
  const g = state.latestGossip;
  const self = state.selfUniqueAddress;
  const sameHostPort = g.members.find((m) =>
    addressEquals(m.uniqueAddress.address, request.node.address),
  );
  if (sameHostPort !== undefined && uniqueAddressEquals(sameHostPort.uniqueAddress, request.node))
    return { type: "welcome-again", welcome: { from: self, gossip: g } };
  if (sameHostPort !== undefined)
    return becomeDowningOldIncarnation(state, sameHostPort.uniqueAddress);
  const member = createMember({
    uniqueAddress: request.node,
    roles: request.roles ?? [],
    appVersion: request.appVersion,
    dataCenter: request.dataCenter,
  });
  const next = withLatestGossip(state, stampLocalChange(addMember(g, member), self));
  const joiningSelf = uniqueAddressEquals(request.node, self);
  return {
    type: "joined",
    state: next,
    welcome: joiningSelf ? undefined : { from: self, gossip: next.latestGossip },
    formedNewCluster: joiningSelf && g.members.length === 0,
    events: diffClusterEvents(state, next),
  };
}

function becomeDowningOldIncarnation(state: MembershipState, old: UniqueAddress): JoinOutcome {
  const g = state.latestGossip;
  const member = findMember(g, old);
  if (member === undefined || member.status === "down")
    return { type: "refused", reason: JoinRefusedReason.OldIncarnationPendingRemoval };
  const self = state.selfUniqueAddress;
  // Self vouches that the old incarnation is gone, so it is removable once down.
  const terminated = withReachability(g, markTerminated(g.overview.reachability, self, old));
  const next = withLatestGossip(state, stampLocalChange(markAsDown(terminated, old), self));
  return {
    type: "downed-old-incarnation",
    old,
    state: next,
    events: diffClusterEvents(state, next),
  };
}

/** Why a Welcome was ignored. */
export type WelcomeIgnoredReason = "already-joined" | "unexpected-sender" | "self-not-in-gossip";

/** Outcome of a Welcome. */
export type WelcomeOutcome =
  | { readonly type: "ignored"; readonly reason: WelcomeIgnoredReason }
  | {
      readonly type: "welcomed";
      readonly state: MembershipState;
      /** Gossip the new view back to the welcoming node (undefined if it is self). */
      readonly replyTo: UniqueAddress | undefined;
      readonly events: readonly ClusterEvent[];
    };

/** Handles a Welcome; `joinedWith` is the address the self node sent Join to. */
export function onWelcome(
  state: MembershipState,
  welcome: Welcome,
  joinedWith: Address,
): WelcomeOutcome {
  if (state.latestGossip.members.length > 0) return { type: "ignored", reason: "already-joined" };
  if (!addressEquals(welcome.from.address, joinedWith))
    return { type: "ignored", reason: "unexpected-sender" };
  if (!hasMember(welcome.gossip, state.selfUniqueAddress))
    return { type: "ignored", reason: "self-not-in-gossip" };
  const next = markSeenBySelf(withLatestGossip(state, welcome.gossip));
  const fromSelf = uniqueAddressEquals(welcome.from, state.selfUniqueAddress);
  return {
    type: "welcomed",
    state: next,
    replyTo: fromSelf ? undefined : welcome.from,
    events: diffClusterEvents(state, next),
  };
}

/** The answer to InitJoin. */
export type InitJoinReply =
  | { readonly type: "init-join-ack"; readonly from: Address }
  | { readonly type: "init-join-nack"; readonly from: Address };

/** Ack when self has joined and is neither down nor exiting; nack otherwise. */
export function onInitJoin(state: MembershipState): InitJoinReply {
  const from = state.selfUniqueAddress.address;
  const me = selfMember(state);
  if (me === undefined || me.status === "down" || me.status === "exiting")
    return { type: "init-join-nack", from };
  return { type: "init-join-ack", from };
}
