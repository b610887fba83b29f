/**
 * What the Split Brain Resolver decides on: one node's view of the members of its data
 * center, the observer -> subject unreachability records, and who has seen the current
 * gossip; plus the counting helpers the strategies share.
 *
 * Definitions (every strategy and the stability tracker use exactly these):
 * - unreachable: subjects of an unreachable or terminated record between two members,
 *   never self (a node always considers itself reachable);
 * - downable: members that are not down and not exiting (joining and weakly-up
 *   included: they could be up on the other side);
 * - the SBR decides while any member is unreachable, whatever its status: a side whose
 *   only unreachable members are exiting must still decide (under static-quorum or
 *   lease-majority it may have to down itself), but down and exiting members are
 *   never downed again;
 * - counted members (the sizes the strategies compare): not down, not exiting, not
 *   joining / weakly-up unless `includingPossiblyUp`, not leaving when
 *   `excludingPossiblyExiting`; restricted to the strategy's role if any;
 * - indirectly connected: among the records between downable members (a down or exiting
 *   node's records are stale), nodes that are both an observer and a subject of
 *   unreachability (a cycle), and both ends of every record whose subject has seen the
 *   current gossip (it is unreachable yet still gets gossip through a third node).
 *   A clean partition or a crash produces neither.
 */
import { findMember, type Gossip } from "../membership/gossip.js";
import { hasRole, type Member, UP_NUMBER_UNASSIGNED } from "../membership/member.js";
import { compareMembers } from "../membership/member-ordering.js";
import {
  dcMembers,
  dcReachabilityNoOutsideNodes,
  type MembershipState,
} from "../membership/membership-state.js";
import {
  type Reachability,
  type ReachabilityRecord,
  ReachabilityStatus,
} from "../membership/reachability.js";
import {
  compareUniqueAddresses,
  type UniqueAddress,
  uniqueAddressEquals,
  uniqueAddressToString,
} from "../membership/unique-address.js";

/** The SBR's input: one node's view of its data center. */
export interface SbrView {
  readonly self: UniqueAddress;
  /** Members of the self data center, any status. */
  readonly members: readonly Member[];
  /** Reachability observations (rows about non-members are ignored). */
  readonly reachability: Reachability;
  /** Nodes that have seen the current gossip version. */
  readonly seenBy?: Iterable<UniqueAddress>;
}

/** The SBR view of a membership state (self DC members, seen set of the gossip). */
export function sbrViewOf(state: MembershipState): SbrView {
  const g: Gossip = state.latestGossip;
  let seenBy: readonly UniqueAddress[] | undefined;
  return {
    self: state.selfUniqueAddress,
    members: selfDcMembersOf(state),
    reachability: dcReachabilityNoOutsideNodes(state),
    // read by decisions only, not by the resolver's observation every leader tick
    seenBy: {
      [Symbol.iterator]: () => {
        seenBy ??= g.overview.seen.filter((n) => findMember(g, n)?.dataCenter === state.selfDc);
        return seenBy[Symbol.iterator]();
      },
    },
  };
}

/** The self DC's members of a member list, kept per list and DC (lists are immutable). */
const selfDcMembers = new WeakMap<readonly Member[], { dc: string; members: readonly Member[] }>();

function selfDcMembersOf(state: MembershipState): readonly Member[] {
  const all = state.latestGossip.members;
  const hit = selfDcMembers.get(all);
  if (hit !== undefined && hit.dc === state.selfDc) return hit.members;
  const members = Object.freeze(dcMembers(state).filter((m) => m.dataCenter === state.selfDc));
  selfDcMembers.set(all, { dc: state.selfDc, members });
  return members;
}

const key = uniqueAddressToString;

/** The view prepared for counting (internal to the downing folder). */
export interface SbrContext {
  readonly self: UniqueAddress;
  /** All members, member order. */
  readonly all: readonly Member[];
  /** Unreachable / terminated records between members. */
  readonly records: readonly ReachabilityRecord[];
  /** Keys of unreachable subjects, self excluded. */
  readonly unreachable: ReadonlySet<string>;
  readonly seen: ReadonlySet<string>;
}

function unreachableOf(records: readonly ReachabilityRecord[], self: UniqueAddress): Set<string> {
  return new Set(
    records.filter((r) => !uniqueAddressEquals(r.subject, self)).map((r) => key(r.subject)),
  );
}

/** The members in member order and their keys, kept per member list (lists are immutable). */
interface SortedMembers {
  readonly all: readonly Member[];
  readonly keys: ReadonlySet<string>;
  /** Key -> position in `all`. */
  readonly order: ReadonlyMap<string, number>;
  /** Keys of the members that have been up (an assigned up-number); computed on demand. */
  wasUp: ReadonlySet<string> | undefined;
}

const sortedMembers = new WeakMap<readonly Member[], SortedMembers>();

/** The sorted members of a context (its `all`), as kept per member list. */
const sortedOfContext = new WeakMap<SbrContext, SortedMembers>();

/** Each view's context (the resolver's observation asks for it twice per view). */
const contexts = new WeakMap<SbrView, SbrContext>();

/** Prepares a view: sorts members, keeps only unreachable/terminated rows among members. */
export function contextOf(view: SbrView): SbrContext {
  const kept = contexts.get(view);
  if (kept !== undefined) return kept;
  let sorted = sortedMembers.get(view.members);
  if (sorted === undefined) {
    const all = [...view.members].sort(compareMembers);
    const order = new Map<string, number>();
    for (let i = 0; i < all.length; i++) order.set(key((all[i] as Member).uniqueAddress), i);
    sorted = { all, keys: new Set(order.keys()), order, wasUp: undefined };
    // only a frozen list stays the same list
    if (Object.isFrozen(view.members)) sortedMembers.set(view.members, sorted);
  }
  const { all, keys: isMember } = sorted;
  const records = view.reachability.records.filter(
    (r) =>
      r.status !== ReachabilityStatus.Reachable &&
      isMember.has(key(r.observer)) &&
      isMember.has(key(r.subject)),
  );
  let seen: ReadonlySet<string> | undefined;
  const ctx: SbrContext = {
    self: view.self,
    all,
    records,
    unreachable: unreachableOf(records, view.self),
    get seen() {
      seen ??= new Set([...(view.seenBy ?? [])].map(key));
      return seen;
    },
  };
  contexts.set(view, ctx);
  sortedOfContext.set(ctx, sorted);
  return ctx;
}

/**
 * The members of `ctx` whose keys are in `keys`, in member order: a walk over the keys
 * (a few unreachable nodes), not over all members.
 */
function membersWithKeys(ctx: SbrContext, keys: ReadonlySet<string>): Member[] {
  const sorted = sortedOfContext.get(ctx);
  if (sorted === undefined) return ctx.all.filter((m) => keys.has(key(m.uniqueAddress)));
  const at: number[] = [];
  keys.forEach((k) => {
    const i = sorted.order.get(k);
    if (i !== undefined) at.push(i);
  });
  at.sort((a, b) => a - b);
  return at.map((i) => sorted.all[i] as Member);
}

/** Keys of the members of `ctx` that have been up (kept per member list). */
function wasUpKeys(ctx: SbrContext): ReadonlySet<string> {
  const sorted = sortedOfContext.get(ctx);
  const compute = () =>
    new Set(
      ctx.all.filter((m) => m.upNumber !== UP_NUMBER_UNASSIGNED).map((m) => key(m.uniqueAddress)),
    );
  if (sorted === undefined) return compute();
  sorted.wasUp ??= compute();
  return sorted.wasUp;
}

/** The same context with only `records` (unreachable set recomputed). */
export function withRecords(ctx: SbrContext, records: readonly ReachabilityRecord[]): SbrContext {
  return { ...ctx, records, unreachable: unreachableOf(records, ctx.self) };
}

/** True if `m` is unreachable in this context. */
export function isUnreachable(ctx: SbrContext, m: Member): boolean {
  return ctx.unreachable.has(key(m.uniqueAddress));
}

/** Which members count (see the module comment). */
export interface CountOptions {
  readonly includingPossiblyUp: boolean;
  readonly excludingPossiblyExiting: boolean;
}

/** The default counting: up-like members, leaving included. */
export const COUNT_DEFAULT: CountOptions = {
  includingPossiblyUp: false,
  excludingPossiblyExiting: false,
};

/** Counted members with `role` (all when undefined), member order. */
export function counted(
  ctx: SbrContext,
  options: CountOptions,
  role: string | undefined,
): Member[] {
  return ctx.all.filter((m) => {
    if (m.status === "down" || m.status === "exiting") return false;
    if (!options.includingPossiblyUp && (m.status === "joining" || m.status === "weakly-up"))
      return false;
    if (options.excludingPossiblyExiting && m.status === "leaving") return false;
    return role === undefined || hasRole(m, role);
  });
}

/** How many of `members` are reachable / unreachable. */
export function sides(ctx: SbrContext, members: readonly Member[]): [number, number] {
  const unreachable = members.filter((m) => isUnreachable(ctx, m)).length;
  return [members.length - unreachable, unreachable];
}

/** Keys of downable members (not down, not exiting). */
export function downableKeys(ctx: SbrContext): Set<string> {
  return new Set(
    ctx.all
      .filter((m) => m.status !== "down" && m.status !== "exiting")
      .map((m) => key(m.uniqueAddress)),
  );
}

/**
 * The unreachable members (self excluded, any status), member order: the SBR decides
 * while this is non-empty, and the stability tracker watches it.
 */
export function unreachableMembersOf(view: SbrView): Member[] {
  const ctx = contextOf(view);
  return membersWithKeys(ctx, ctx.unreachable);
}

/**
 * The unreachable members whose unreachability counts towards down-all-when-unstable:
 * those with at least one unreachable/terminated record whose observer and subject have
 * both been up (an assigned up-number; downed or exiting members keep theirs), i.e. that
 * were up together. Joiners of a boot storm (joining, weakly-up, or downed before ever
 * being up) and the records they make are left out (sbr-stability.ts).
 */
export function unreachableUpTogetherOf(view: SbrView): Member[] {
  const ctx = contextOf(view);
  const wasUp = wasUpKeys(ctx);
  const subjects = new Set(
    ctx.records
      .filter(
        (r) =>
          !uniqueAddressEquals(r.subject, ctx.self) &&
          wasUp.has(key(r.observer)) &&
          wasUp.has(key(r.subject)),
      )
      .map((r) => key(r.subject)),
  );
  return membersWithKeys(ctx, subjects);
}

/** The two kinds of indirect connection (keys), see the module comment. */
export interface IndirectlyConnected {
  readonly cycle: ReadonlySet<string>;
  readonly seenWhileUnreachable: ReadonlySet<string>;
  readonly all: ReadonlySet<string>;
}

/**
 * Detects indirectly connected nodes from the records between downable members and the
 * seen set. Records whose observer or subject is down or exiting are left out: a downed
 * node's own observations are stale (it may be stopped, paused or cut off) and the others
 * of course see it unreachable, so with them a clean partition that follows a downing
 * would look like a cycle (b -> a(down) -> b) and each side would down the other's nodes
 * as indirectly connected, leaving both running.
 */
export function indirectlyConnectedOf(ctx: SbrContext): IndirectlyConnected {
  const downable = downableKeys(ctx);
  const records = ctx.records.filter(
    (r) => downable.has(key(r.observer)) && downable.has(key(r.subject)),
  );
  const observers = new Set(records.map((r) => key(r.observer)));
  const subjects = new Set(records.map((r) => key(r.subject)));
  const cycle = new Set([...observers].filter((k) => subjects.has(k)));
  const seenWhileUnreachable = new Set<string>();
  for (const r of records) {
    if (!ctx.seen.has(key(r.subject))) continue;
    seenWhileUnreachable.add(key(r.observer));
    seenWhileUnreachable.add(key(r.subject));
  }
  return { cycle, seenWhileUnreachable, all: new Set([...cycle, ...seenWhileUnreachable]) };
}

/** The member nodes whose keys are in `keys`, sorted by node order. */
export function nodesOf(ctx: SbrContext, keys: ReadonlySet<string>): UniqueAddress[] {
  return ctx.all
    .map((m) => m.uniqueAddress)
    .filter((n) => keys.has(key(n)))
    .sort(compareUniqueAddresses);
}
