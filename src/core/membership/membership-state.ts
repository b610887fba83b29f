/**
 * The membership as seen from one node: the latest gossip plus the self node, its data
 * center and the number of cross-DC contacts. Answers the questions the gossip driver
 * and the leader ask: is there convergence, who is leader, is a node reachable, who is
 * youngest/oldest, whom to tell about exiting members.
 *
 * Data centers: every rule here is scoped to the self DC (convergence, leader, in-DC
 * reachability), as the reference vectors require. shardkit runs one DC ("default") by
 * default, where all of this reduces to the whole cluster; cross-DC gossip itself is
 * deliberately not built.
 *
 * Pure functions of the state value; a non-member node is treated as removed.
 */
import { fail } from "../../base/assert.js";
import {
  findMember,
  type Gossip,
  isMultiDc,
  reachabilityExcludingDownedObservers,
  SEEN_BITS_PER_ELEMENT,
  seenBitsOf,
  withSeen,
} from "./gossip.js";
import { DEFAULT_DATA_CENTER, effectiveUpNumber, hasRole, type Member } from "./member.js";
import { compareByAge, compareByLeaderStatus, compareMembers } from "./member-ordering.js";
import type { MemberStatus } from "./member-status.js";
import {
  allUnreachableOrTerminated,
  filterRecords,
  isAllReachable,
  isReachable,
  isReachableBy,
  isUnreachableOrTerminated,
  type Reachability,
  removeNodes,
  removeObservers,
} from "./reachability.js";
import { sameElements } from "./sorted-array.js";
import {
  type UniqueAddress,
  uniqueAddressEquals,
  uniqueAddressToString,
} from "./unique-address.js";

/** Default number of oldest members per DC that talk across data centers. */
export const DEFAULT_CROSS_DC_CONNECTIONS = 5;

/** The membership as seen from one node. Plain immutable data. */
export interface MembershipState {
  readonly latestGossip: Gossip;
  readonly selfUniqueAddress: UniqueAddress;
  readonly selfDc: string;
  /** How many of the oldest members per DC take part in cross-DC gossip (>= 1). */
  readonly crossDcConnections: number;
}

/** Parameters of `membershipStateOf`. */
export interface MembershipStateFields {
  readonly latestGossip: Gossip;
  readonly selfUniqueAddress: UniqueAddress;
  readonly selfDc?: string;
  readonly crossDcConnections?: number;
}

/** Statuses that may lead and that must have seen a gossip for convergence. */
const LEADER_OR_CONVERGENCE_STATUSES: ReadonlySet<MemberStatus> = new Set<MemberStatus>([
  "up",
  "leaving",
  "preparing-for-shutdown",
  "ready-for-shutdown",
]);

/** Unreachable members with these statuses do not block convergence. */
const SKIP_UNREACHABLE_STATUSES: ReadonlySet<MemberStatus> = new Set<MemberStatus>([
  "down",
  "exiting",
]);

const key = uniqueAddressToString;

/** A frozen state; selfDc defaults to "default", crossDcConnections to 5. */
export function membershipStateOf(fields: MembershipStateFields): MembershipState {
  const crossDcConnections = fields.crossDcConnections ?? DEFAULT_CROSS_DC_CONNECTIONS;
  if (!(Number.isSafeInteger(crossDcConnections) && crossDcConnections >= 1))
    fail(`crossDcConnections must be an integer >= 1, got ${crossDcConnections}`);
  return Object.freeze({
    latestGossip: fields.latestGossip,
    selfUniqueAddress: fields.selfUniqueAddress,
    selfDc: fields.selfDc ?? DEFAULT_DATA_CENTER,
    crossDcConnections,
  });
}

/** The same view over another gossip. */
export function withLatestGossip(s: MembershipState, latestGossip: Gossip): MembershipState {
  return Object.freeze({ ...s, latestGossip });
}

/** The view with the latest gossip marked as seen by the self node (a member). */
export function markSeenBySelf(s: MembershipState): MembershipState {
  return withLatestGossip(s, withSeen(s.latestGossip, s.selfUniqueAddress));
}

/** The self node's member entry, undefined if it is not (or no longer) a member. */
export function selfMember(s: MembershipState): Member | undefined {
  return findMember(s.latestGossip, s.selfUniqueAddress);
}

function nodesOutsideDc(s: MembershipState): readonly UniqueAddress[] {
  const members = s.latestGossip.members;
  const memo = outsideDcMemo.get(members);
  if (memo !== undefined && memo.dc === s.selfDc) return memo.nodes;
  const nodes = Object.freeze(
    members.filter((m) => m.dataCenter !== s.selfDc).map((m) => m.uniqueAddress),
  );
  outsideDcMemo.set(members, { dc: s.selfDc, nodes });
  return nodes;
}

/** The members that are down or of another DC, per member list and DC (as outsideDcMemo). */
const downOrOutsideDcMemo = new WeakMap<
  readonly Member[],
  { readonly dc: string; readonly nodes: readonly UniqueAddress[] }
>();

/** Nodes of the members that are down or outside the self DC (observers that do not count). */
function downOrOutsideDc(s: MembershipState): readonly UniqueAddress[] {
  const members = s.latestGossip.members;
  const memo = downOrOutsideDcMemo.get(members);
  if (memo !== undefined && memo.dc === s.selfDc) return memo.nodes;
  const nodes = Object.freeze(
    members
      .filter((m) => m.status === "down" || m.dataCenter !== s.selfDc)
      .map((m) => m.uniqueAddress),
  );
  downOrOutsideDcMemo.set(members, { dc: s.selfDc, nodes });
  return nodes;
}

/**
 * nodesOutsideDc per member list (and DC): the reachability views ask it on every
 * received gossip and tick, each a walk over all members, and the member list changes
 * far less often than the table. Member lists are immutable; the WeakMap keeps none alive.
 */
const outsideDcMemo = new WeakMap<
  readonly Member[],
  { readonly dc: string; readonly nodes: readonly UniqueAddress[] }
>();

/** Reachability without observations made by members of other data centers. */
export function dcReachability(s: MembershipState): Reachability {
  return removeObservers(s.latestGossip.overview.reachability, nodesOutsideDc(s));
}

/** dcReachability restricted to subjects outside the self DC (cross-DC failure detection). */
export function dcReachabilityWithoutObservationsWithin(s: MembershipState): Reachability {
  return filterRecords(dcReachability(s), (r) => {
    const subject = findMember(s.latestGossip, r.subject);
    return subject === undefined || subject.dataCenter !== s.selfDc;
  });
}

/** In-DC reachability: rows by down or other-DC observers and rows about other-DC nodes dropped. */
export function dcReachabilityExcludingDownedObservers(s: MembershipState): Reachability {
  // no rows: nothing to remove (the common case, without a walk over the members)
  if (s.latestGossip.overview.reachability.records.length === 0)
    return s.latestGossip.overview.reachability;
  const g = s.latestGossip;
  const memo = excludingDownedMemo.get(g.overview.reachability);
  if (memo !== undefined && memo.members === g.members && memo.dc === s.selfDc) return memo.result;
  const result = removeNodes(
    removeObservers(g.overview.reachability, downOrOutsideDc(s)),
    nodesOutsideDc(s),
  );
  excludingDownedMemo.set(g.overview.reachability, { members: g.members, dc: s.selfDc, result });
  return result;
}

/**
 * dcReachabilityExcludingDownedObservers per table, with the members and DC it was
 * computed for: convergence, leader and reachability checks ask it on every gossip and
 * tick while there are rows. Tables are immutable; the WeakMap keeps none alive.
 */
const excludingDownedMemo = new WeakMap<
  Reachability,
  { readonly members: readonly Member[]; readonly dc: string; readonly result: Reachability }
>();

/** Reachability without any row involving a node of another data center. */
export function dcReachabilityNoOutsideNodes(s: MembershipState): Reachability {
  return removeNodes(s.latestGossip.overview.reachability, nodesOutsideDc(s));
}

function memberHinderingConvergenceExists(s: MembershipState, confirmed: ReadonlySet<string>) {
  const g = s.latestGossip;
  const firstMemberInDc = !g.members.some(
    (m) => m.dataCenter === s.selfDc && LEADER_OR_CONVERGENCE_STATUSES.has(m.status),
  );
  const mustHaveSeen = (status: MemberStatus) =>
    LEADER_OR_CONVERGENCE_STATUSES.has(status) ||
    (firstMemberInDc && (status === "joining" || status === "weakly-up"));
  // the seen set as the bitmap over the members (kept per gossip): member i is bit i
  const bits = seenBitsOf(g);
  return g.members.some(
    (m, i) =>
      (firstMemberInDc || m.dataCenter === s.selfDc) &&
      mustHaveSeen(m.status) &&
      (((bits[Math.floor(i / SEEN_BITS_PER_ELEMENT)] as number) >> (i % SEEN_BITS_PER_ELEMENT)) &
        1) ===
        0 &&
      (confirmed.size === 0 || !confirmed.has(key(m.uniqueAddress))),
  );
}

function unreachableBlocksConvergence(s: MembershipState, confirmed: ReadonlySet<string>) {
  for (const node of allUnreachableOrTerminated(dcReachabilityExcludingDownedObservers(s))) {
    if (uniqueAddressEquals(node, s.selfUniqueAddress) || confirmed.has(key(node))) continue;
    const member = findMember(s.latestGossip, node); // a non-member counts as removed
    if (member === undefined || !SKIP_UNREACHABLE_STATUSES.has(member.status)) return true;
  }
  return false;
}

/**
 * True if the latest gossip has converged in the self DC: every member that must see it
 * (up, leaving, preparing/ready-for-shutdown; plus joining and weakly-up of all DCs when
 * the self DC has no such member yet) has seen it or is in `exitingConfirmed`, and every
 * in-DC unreachable node (observed by non-down in-DC members) other than self and
 * `exitingConfirmed` is down or exiting. Leader actions run only on convergence.
 */
export function convergence(
  s: MembershipState,
  exitingConfirmed: Iterable<UniqueAddress> = [],
): boolean {
  const confirmed = new Set([...exitingConfirmed].map(key));
  const memoizable = confirmed.size === 0;
  if (memoizable) {
    const memo = convergenceMemo.get(s.selfUniqueAddress);
    if (memo !== undefined && memo.gossip === s.latestGossip && memo.dc === s.selfDc)
      return memo.converged;
  }
  const converged =
    !unreachableBlocksConvergence(s, confirmed) && !memberHinderingConvergenceExists(s, confirmed);
  if (memoizable)
    convergenceMemo.set(s.selfUniqueAddress, { gossip: s.latestGossip, dc: s.selfDc, converged });
  return converged;
}

/**
 * Each node's last convergence verdict without exiting confirmations (the usual case),
 * with the gossip it was computed for: the machine asks on every state change and
 * readers on every view, each an O(N) walk. Kept per self node, not per gossip: in the
 * simulator hundreds of nodes share decoded gossips, and an entry per gossip was
 * overwritten by each node in turn. The WeakMap keeps no node alive.
 */
const convergenceMemo = new WeakMap<
  UniqueAddress,
  { readonly gossip: Gossip; readonly dc: string; readonly converged: boolean }
>();

/**
 * True if `to` is a member and reachable: for an in-DC member only non-down in-DC
 * observations count; for another DC's member any non-down observer counts.
 */
export function isReachableExcludingDownedObservers(
  s: MembershipState,
  to: UniqueAddress,
): boolean {
  const member = findMember(s.latestGossip, to);
  if (member === undefined) return false;
  if (member.dataCenter === s.selfDc)
    return isReachable(dcReachabilityExcludingDownedObservers(s), to);
  return isReachable(reachabilityExcludingDownedObservers(s.latestGossip), to);
}

/** Members of the self DC, or all members when the gossip spans only one DC. */
export function dcMembers(s: MembershipState): Member[] {
  const members = s.latestGossip.members;
  return isMultiDc(s.latestGossip)
    ? members.filter((m) => m.dataCenter === s.selfDc)
    : [...members];
}

/**
 * The leader among `candidates`: of the self-DC, non-down candidates that are reachable
 * in the DC view (or are self), the first in member order whose status is up, leaving,
 * preparing- or ready-for-shutdown; failing that the first in leader-status order.
 */
export function leaderOf(
  s: MembershipState,
  candidates: Iterable<Member>,
): UniqueAddress | undefined {
  return leaderAmong(s, candidates, false);
}

/**
 * leaderOf; `inMemberOrder`: the caller knows the candidates are in member order (a
 * gossip's members, or some of them in their order: the gossip invariant), so the first
 * eligible candidate with a leader status is the leader, found without a walk over the
 * rest (while a crash's observations spread, every received gossip asks it anew).
 */
function leaderAmong(
  s: MembershipState,
  candidates: Iterable<Member>,
  inMemberOrder: boolean,
): UniqueAddress | undefined {
  const reachability = dcReachability(s);
  if (inMemberOrder && Array.isArray(candidates)) {
    const ordered = candidates as readonly Member[];
    const anyUnreachable = !isAllReachable(reachability);
    for (let i = 0; i < ordered.length; i++) {
      const m = ordered[i] as Member;
      if (m.dataCenter !== s.selfDc || m.status === "down") continue;
      if (
        anyUnreachable &&
        isUnreachableOrTerminated(reachability, m.uniqueAddress) &&
        !uniqueAddressEquals(m.uniqueAddress, s.selfUniqueAddress)
      )
        continue;
      if (LEADER_OR_CONVERGENCE_STATUSES.has(m.status)) return m.uniqueAddress;
    }
    // no candidate with a leader status: the general rule below
  }
  const allReachable = isAllReachable(reachability);
  // the keys only when somebody is unreachable; an array of candidates is not copied
  const unreachable: ReadonlySet<string> = allReachable
    ? new Set()
    : new Set(allUnreachableOrTerminated(reachability).map(key));
  const list: readonly Member[] = Array.isArray(candidates)
    ? (candidates as readonly Member[])
    : [...candidates];
  const eligible = list.filter(
    (m) =>
      m.dataCenter === s.selfDc &&
      m.status !== "down" &&
      (allReachable ||
        !unreachable.has(key(m.uniqueAddress)) ||
        uniqueAddressEquals(m.uniqueAddress, s.selfUniqueAddress)),
  );
  // candidates are usually a gossip's members, already in member order: checked in one
  // pass instead of sorted
  let ordered = true;
  for (let i = 1; ordered && i < eligible.length; i++)
    ordered = compareMembers(eligible[i - 1] as Member, eligible[i] as Member) < 0;
  if (!ordered) eligible.sort(compareMembers);
  if (eligible.length === 0) return undefined;
  const preferred = eligible.find((m) => LEADER_OR_CONVERGENCE_STATUSES.has(m.status));
  return (preferred ?? (eligible.sort(compareByLeaderStatus)[0] as Member)).uniqueAddress;
}

/**
 * Each node's last leader, with the gossip it was computed for: the leader is read
 * several times per gossip received and per tick (events, leader actions, the resolver),
 * each an O(N) walk. Per self node, as convergenceMemo.
 */
const leaderMemo = new WeakMap<
  UniqueAddress,
  { readonly gossip: Gossip; readonly dc: string; readonly leader: UniqueAddress | undefined }
>();

/**
 * Each node's last leader per member list, with the unreachable nodes it was computed
 * with (per self node, as convergenceMemo): the
 * leader depends on the members and on which of them are unreachable only, and while
 * observations of a crash spread every received gossip is a new one (a new table) over
 * the same member list and mostly the same unreachable nodes.
 */
/** A leader computed for a member list, DC and set of unreachable nodes. */
interface LeaderOfMembers {
  readonly members: readonly Member[];
  readonly dc: string;
  readonly unreachable: readonly UniqueAddress[];
  readonly leader: UniqueAddress | undefined;
}

const leaderByMembersMemo = new WeakMap<UniqueAddress, LeaderOfMembers>();

/** The leader of the self DC (see leaderOf). */
export function leader(s: MembershipState): UniqueAddress | undefined {
  const g = s.latestGossip;
  const memo = leaderMemo.get(s.selfUniqueAddress);
  if (memo !== undefined && memo.gossip === g && memo.dc === s.selfDc) return memo.leader;
  // leaderOf reads the unreachable nodes of dcReachability only
  const unreachable = allUnreachableOrTerminated(dcReachability(s));
  const byMembers = leaderByMembersMemo.get(s.selfUniqueAddress);
  let l: UniqueAddress | undefined;
  if (
    byMembers !== undefined &&
    byMembers.members === g.members &&
    byMembers.dc === s.selfDc &&
    sameElements(byMembers.unreachable, unreachable)
  )
    l = byMembers.leader;
  else {
    l = leaderAmong(s, g.members, true);
    leaderByMembersMemo.set(s.selfUniqueAddress, {
      members: g.members,
      dc: s.selfDc,
      unreachable,
      leader: l,
    });
  }
  leaderMemo.set(s.selfUniqueAddress, { gossip: g, dc: s.selfDc, leader: l });
  return l;
}

/** True if `node` is the leader of the self DC. */
export function isLeader(s: MembershipState, node: UniqueAddress): boolean {
  const l = leader(s);
  return l !== undefined && uniqueAddressEquals(l, node);
}

/**
 * Each node's last role leaders per role, as leaderByMembersMemo: every received gossip
 * diffs the role leaders of the view before and after it (diffClusterEvents), each an
 * O(N) walk, and while a crash's observations spread the member list and its
 * unreachable members stay the same.
 */
const roleLeaderMemo = new WeakMap<UniqueAddress, Map<string, LeaderOfMembers>>();

/** The leader among members with `role` (e.g. where a per-role singleton lives). */
export function roleLeader(s: MembershipState, role: string): UniqueAddress | undefined {
  const g = s.latestGossip;
  const unreachable = allUnreachableOrTerminated(dcReachability(s));
  let byRole = roleLeaderMemo.get(s.selfUniqueAddress);
  const memo = byRole?.get(role);
  if (
    memo !== undefined &&
    memo.members === g.members &&
    memo.dc === s.selfDc &&
    sameElements(memo.unreachable, unreachable)
  )
    return memo.leader;
  const l = leaderAmong(
    s,
    g.members.filter((m) => hasRole(m, role)),
    true,
  );
  if (byRole === undefined) {
    byRole = new Map();
    roleLeaderMemo.set(s.selfUniqueAddress, byRole);
  }
  byRole.set(role, { members: g.members, dc: s.selfDc, unreachable, leader: l });
  return l;
}

/** True if `node` is self or a member of the self DC. */
export function isInSameDc(s: MembershipState, node: UniqueAddress): boolean {
  if (uniqueAddressEquals(node, s.selfUniqueAddress)) return true;
  return findMember(s.latestGossip, node)?.dataCenter === s.selfDc;
}

/**
 * True if gossip may be sent to `node`: never to self, never to a node that a non-down
 * observer records as unreachable or terminated (for a member of another DC: any non-down
 * observer), as Akka does since 2.6. Such a node usually does not answer (a crashed
 * member: until it is removed, every member would keep sending it statuses, and after a
 * failure wave most gossip rounds went to the dead); a reachable member it is cut off
 * from still answers its statuses (receiveGossipStatus checks only the receiver's own
 * observation), so it catches up by pulling.
 */
export function validNodeForGossip(s: MembershipState, node: UniqueAddress): boolean {
  if (uniqueAddressEquals(node, s.selfUniqueAddress)) return false;
  // pairwise first: what self observes itself (also when self is down and excluded below)
  if (!isReachableBy(s.latestGossip.overview.reachability, s.selfUniqueAddress, node)) return false;
  const member = findMember(s.latestGossip, node);
  if (member === undefined) return false;
  if (member.dataCenter !== s.selfDc) return isReachableExcludingDownedObservers(s, node);
  return !isUnreachableOrTerminated(dcReachabilityExcludingDownedObservers(s), node);
}

/**
 * The youngest of dcMembers: highest upNumber (unassigned counts as 0), first in member
 * order on ties; undefined when there is no member.
 */
export function youngestMember(s: MembershipState): Member | undefined {
  let youngest: Member | undefined;
  for (const m of dcMembers(s)) {
    if (youngest === undefined || effectiveUpNumber(m) > effectiveUpNumber(youngest)) youngest = m;
  }
  return youngest;
}

/** Per data center (sorted by name), its `crossDcConnections` oldest members, oldest first. */
export function ageSortedTopOldestMembersPerDc(
  s: MembershipState,
): ReadonlyMap<string, readonly Member[]> {
  const byDc = new Map<string, Member[]>();
  for (const m of s.latestGossip.members) {
    const list = byDc.get(m.dataCenter) ?? [];
    list.push(m);
    byDc.set(m.dataCenter, list);
  }
  const out = new Map<string, readonly Member[]>();
  for (const dc of [...byDc.keys()].sort()) {
    const oldest = (byDc.get(dc) as Member[]).sort(compareByAge).slice(0, s.crossDcConnections);
    out.set(dc, Object.freeze(oldest));
  }
  return out;
}

/**
 * Whom to gossip an exiting change to, so that potential singleton hosts learn it fast:
 * the two oldest self-DC members, plus for every role of an exiting member the oldest
 * and second-oldest self-DC members with that role. Empty when nobody is exiting.
 * Returned in member order.
 */
export function gossipTargetsForExitingMembers(
  s: MembershipState,
  exitingMembers: Iterable<Member>,
): Member[] {
  const exiting = [...exitingMembers];
  if (exiting.length === 0) return [];
  const roles = [...new Set(exiting.flatMap((m) => m.roles))].sort();
  const byAge = s.latestGossip.members.filter((m) => m.dataCenter === s.selfDc).sort(compareByAge);
  const targets = new Map<string, Member>();
  const add = (m: Member | undefined) => {
    if (m !== undefined) targets.set(key(m.uniqueAddress), m);
  };
  add(byAge[0]);
  add(byAge[1]);
  for (const role of roles) {
    const withRole = byAge.filter((m) => hasRole(m, role));
    add(withRole[0]);
    add(withRole[1]);
  }
  return [...targets.values()].sort(compareMembers);
}
