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
import { allRoles } from "./gossip.js";
import { type Member, memberFrom } from "./member.js";
import { compareMembers } from "./member-ordering.js";
import type { MemberStatus } from "./member-status.js";
import {
  dcReachabilityNoOutsideNodes,
  leader,
  type MembershipState,
  roleLeader,
} from "./membership-state.js";
import { allUnreachableOrTerminated, type Reachability } from "./reachability.js";
import {
  type UniqueAddress,
  uniqueAddressEquals,
  uniqueAddressToString,
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
 * unreachableKeys of each node's last view: each received gossip diffs the previous view
 * against the new one, so every view is asked twice. Per self node, not per gossip (in
 * the simulator many nodes share decoded gossips); the WeakMap keeps no node alive.
 */
const unreachableMemo = new WeakMap<
  UniqueAddress,
  {
    readonly members: readonly Member[];
    readonly reachability: Reachability;
    readonly dc: string;
    readonly keys: Set<string>;
  }
>();

function unreachableKeys(s: MembershipState): Set<string> {
  const g = s.latestGossip;
  if (g.overview.reachability.records.length === 0) return new Set();
  const memo = unreachableMemo.get(s.selfUniqueAddress);
  // it depends on the members and the table, not on the seen set
  if (
    memo !== undefined &&
    memo.members === g.members &&
    memo.reachability === g.overview.reachability &&
    memo.dc === s.selfDc
  )
    return memo.keys;
  const keys = computeUnreachableKeys(s);
  unreachableMemo.set(s.selfUniqueAddress, {
    members: g.members,
    reachability: g.overview.reachability,
    dc: s.selfDc,
    keys,
  });
  return keys;
}

function computeUnreachableKeys(s: MembershipState): Set<string> {
  const nodes = allUnreachableOrTerminated(dcReachabilityNoOutsideNodes(s));
  return new Set(
    nodes
      .filter((n) => !uniqueAddressEquals(n, s.selfUniqueAddress))
      .map((n) => uniqueAddressToString(n)),
  );
}

/** Members that became unreachable or reachable again (self excluded), old -> new. */
export function diffReachabilityEvents(
  before: MembershipState,
  after: MembershipState,
): ReachabilityEvent[] {
  const was = unreachableKeys(before);
  const now = unreachableKeys(after);
  // the usual case while observations spread: the same members are unreachable
  if (was === now || sameKeys(was, now)) return [];
  const out: ReachabilityEvent[] = [];
  for (const member of after.latestGossip.members) {
    const k = uniqueAddressToString(member.uniqueAddress);
    if (now.has(k) && !was.has(k)) out.push({ type: "unreachable-member", member });
    else if (!now.has(k) && was.has(k)) out.push({ type: "reachable-member", member });
  }
  return out;
}

/** True if both sets hold the same keys (forEach: no iterator objects per element). */
function sameKeys(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a.size !== b.size) return false;
  let same = true;
  b.forEach((k) => {
    if (same && !a.has(k)) same = false;
  });
  return same;
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
