/**
 * Cluster events: what changed between two membership views, as plain data for the
 * driver to publish (member status changes, removals, reachability flips, leader change).
 *
 * Invariants: events are derived only from the two views, never from the action that
 * produced them, so leader actions, gossip receipt and joins report changes the same
 * way and an unchanged view yields no event. The order is deterministic: status changes
 * in member order, then removals in member order, then reachability changes in member
 * order, then the leader change.
 *
 * Why a diff instead of events emitted by each handler: a merged gossip can carry many
 * changes made elsewhere, and only a diff reports all of them exactly once.
 */
import { assertNever } from "../../base/assert.js";
import { allRoles, findMember } from "./gossip.js";
import { type Member, memberFrom } from "./member.js";
import { compareMembers } from "./member-ordering.js";
import type { MemberStatus } from "./member-status.js";
import {
  dcReachabilityNoOutsideNodes,
  leader,
  type MembershipState,
  roleLeader,
} from "./membership-state.js";
import { allUnreachableOrTerminated } from "./reachability.js";
import {
  compareUniqueAddresses,
  type UniqueAddress,
  uniqueAddressEquals,
} from "./unique-address.js";

/** A member reached a new status (one event type per status, except removed). */
export type MemberStatusEvent =
  | { readonly type: "member-joined"; readonly member: Member }
  | { readonly type: "member-weakly-up"; readonly member: Member }
  | { readonly type: "member-up"; readonly member: Member }
  | { readonly type: "member-preparing-for-shutdown"; readonly member: Member }
  | { readonly type: "member-ready-for-shutdown"; readonly member: Member }
  | { readonly type: "member-left"; readonly member: Member }
  | { readonly type: "member-exited"; readonly member: Member }
  | { readonly type: "member-downed"; readonly member: Member };

/** A member is gone; `member` carries status removed, `previousStatus` the last one seen. */
export interface MemberRemovedEvent {
  readonly type: "member-removed";
  readonly member: Member;
  readonly previousStatus: MemberStatus;
}

/** Some in-DC observer now says `member` is unreachable, or none says so any more. */
export type ReachabilityEvent =
  | { readonly type: "unreachable-member"; readonly member: Member }
  | { readonly type: "reachable-member"; readonly member: Member };

/** The self DC's leader changed (undefined: no leader). */
export interface LeaderChangedEvent {
  readonly type: "leader-changed";
  readonly leader: UniqueAddress | undefined;
}

/** Everything the membership model reports to subscribers. */
/** The leader among members with `role` changed (undefined: no such member). */
export interface RoleLeaderChangedEvent {
  readonly type: "role-leader-changed";
  readonly role: string;
  readonly leader: UniqueAddress | undefined;
}

export type ClusterEvent =
  | MemberStatusEvent
  | MemberRemovedEvent
  | ReachabilityEvent
  | LeaderChangedEvent
  | RoleLeaderChangedEvent;

function statusEvent(member: Member): MemberStatusEvent | undefined {
  switch (member.status) {
    case "joining":
      return { type: "member-joined", member };
    case "weakly-up":
      return { type: "member-weakly-up", member };
    case "up":
      return { type: "member-up", member };
    case "preparing-for-shutdown":
      return { type: "member-preparing-for-shutdown", member };
    case "ready-for-shutdown":
      return { type: "member-ready-for-shutdown", member };
    case "leaving":
      return { type: "member-left", member };
    case "exiting":
      return { type: "member-exited", member };
    case "down":
      return { type: "member-downed", member };
    case "removed":
      return undefined; // never a live member (gossip invariant)
    default:
      return assertNever(member.status, "member status");
  }
}

/** Status changes (new members included) and removals, old -> new. */
export function diffMemberEvents(
  before: MembershipState,
  after: MembershipState,
): (MemberStatusEvent | MemberRemovedEvent)[] {
  const out: (MemberStatusEvent | MemberRemovedEvent)[] = [];
  const removed: MemberRemovedEvent[] = [];
  // One walk over both member lists (each sorted by member order, one per node).
  const a = before.latestGossip.members;
  const b = after.latestGossip.members;
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const old = a[i];
    const m = b[j];
    const c = old === m ? 0 : old === undefined ? 1 : m === undefined ? -1 : compareMembers(old, m);
    if (c < 0) {
      const gone = old as Member;
      removed.push({
        type: "member-removed",
        member: memberFrom({ ...gone, status: "removed" }),
        previousStatus: gone.status,
      });
      i++;
      continue;
    }
    const now = m as Member;
    if (c > 0 || (old as Member).status !== now.status) {
      const event = statusEvent(now);
      if (event !== undefined) out.push(event);
    }
    if (c === 0) i++;
    j++;
  }
  for (const r of removed) out.push(r);
  return out;
}

/** Same members, element by element (one identity check each when nothing changed). */
function sameMembers(a: readonly Member[], b: readonly Member[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Whether two views agree on everything events are derived from: the members (status
 * events, leaders) and the reachability rows (reachability events, leaders). Rows are
 * compared by identity of the table, or both empty.
 */
function sameEventBasis(before: MembershipState, after: MembershipState): boolean {
  const rb = before.latestGossip.overview.reachability;
  const ra = after.latestGossip.overview.reachability;
  return (
    before.selfUniqueAddress === after.selfUniqueAddress &&
    before.selfDc === after.selfDc &&
    sameMembers(before.latestGossip.members, after.latestGossip.members) &&
    (rb === ra || (rb.records.length === 0 && ra.records.length === 0))
  );
}

/**
 * The unreachable or terminated nodes of a view's in-DC table, sorted in node order (a
 * frozen array kept per table by allUnreachableOrTerminated, so a view whose table did
 * not change gives the same array).
 */
function unreachableNodesOf(s: MembershipState): readonly UniqueAddress[] {
  if (s.latestGossip.overview.reachability.records.length === 0) return NO_NODES;
  return allUnreachableOrTerminated(dcReachabilityNoOutsideNodes(s));
}

const NO_NODES: readonly UniqueAddress[] = Object.freeze([]);

/** Members that became unreachable or reachable again (self excluded), old -> new. */
export function diffReachabilityEvents(
  before: MembershipState,
  after: MembershipState,
): ReachabilityEvent[] {
  const was = unreachableNodesOf(before);
  const now = unreachableNodesOf(after);
  // the usual case while observations spread: the same members are unreachable (for
  // the same self: a view of another node excludes another node)
  if (was === now && uniqueAddressEquals(before.selfUniqueAddress, after.selfUniqueAddress))
    return [];
  // both sorted in node order: one walk finds the nodes in one of them only
  const changed: { readonly node: UniqueAddress; readonly unreachable: boolean }[] = [];
  const note = (node: UniqueAddress, inWas: boolean, inNow: boolean) => {
    const w = inWas && !uniqueAddressEquals(node, before.selfUniqueAddress);
    const n = inNow && !uniqueAddressEquals(node, after.selfUniqueAddress);
    if (w !== n) changed.push({ node, unreachable: n });
  };
  let i = 0;
  let j = 0;
  while (i < was.length || j < now.length) {
    const a = was[i];
    const b = now[j];
    const c = a === undefined ? 1 : b === undefined ? -1 : compareUniqueAddresses(a, b);
    if (c === 0) note(a as UniqueAddress, true, true);
    else if (c < 0) note(a as UniqueAddress, true, false);
    else note(b as UniqueAddress, false, true);
    if (c <= 0) i++;
    if (c >= 0) j++;
  }
  if (changed.length === 0) return [];
  // events for members only, in member order
  const out: { readonly member: Member; readonly unreachable: boolean }[] = [];
  for (let k = 0; k < changed.length; k++) {
    const x = changed[k] as (typeof changed)[number];
    const member = findMember(after.latestGossip, x.node);
    if (member !== undefined) out.push({ member, unreachable: x.unreachable });
  }
  out.sort((x, y) => compareMembers(x.member, y.member));
  return out.map(
    (x): ReachabilityEvent =>
      x.unreachable
        ? { type: "unreachable-member", member: x.member }
        : { type: "reachable-member", member: x.member },
  );
}

/** All events between two views of the same node, in the documented order. */
export function diffClusterEvents(before: MembershipState, after: MembershipState): ClusterEvent[] {
  if (before.latestGossip === after.latestGossip || sameEventBasis(before, after)) return [];
  const events: ClusterEvent[] = [
    ...diffMemberEvents(before, after),
    ...diffReachabilityEvents(before, after),
  ];
  const newLeader = leader(after);
  if (!sameNode(leader(before), newLeader))
    events.push({ type: "leader-changed", leader: newLeader });
  const roles = [
    ...new Set([...allRoles(before.latestGossip), ...allRoles(after.latestGossip)]),
  ].sort();
  for (const role of roles) {
    const now = roleLeader(after, role);
    if (!sameNode(roleLeader(before, role), now))
      events.push({ type: "role-leader-changed", role, leader: now });
  }
  return events;
}

function sameNode(a: UniqueAddress | undefined, b: UniqueAddress | undefined): boolean {
  return a === undefined || b === undefined ? a === b : uniqueAddressEquals(a, b);
}
