/**
 * The gossiped cluster state (docs/cluster.md, "Gossip and convergence"): the member list,
 * the overview (who has seen this version, the reachability table), the vector-clock
 * version and the tombstones of removed nodes. It is a CRDT-like value: `mergeGossip`
 * reconciles two concurrent versions monotonically (a status never moves back in merge
 * precedence, a removed node never returns).
 *
 * Invariants (checked on every construction, violations are assertion failures):
 * - members sorted by member order, one per node, none with status removed, none
 *   tombstoned (a removed incarnation never comes back);
 * - seen is a sorted subset of the member nodes;
 * - every reachability observer (rows and versions) is a member;
 * - tombstones sorted by node, one per node.
 *
 * Pure and synchronous: the removal timestamp is an input, never read from a clock.
 * Clock entries of a node use `clockKeyOf(node)`, its canonical string form.
 */
import { assert, fail } from "../../base/assert.js";
import { murmur3OfString } from "../../base/hash.js";
import { type Member, withStatus } from "./member.js";
import { compareMembers, highestPriorityOf } from "./member-ordering.js";
import { canTransition, IllegalMemberTransitionError } from "./member-transitions.js";
import {
  emptyReachability,
  isReachableBy,
  mergeReachability,
  type ObserverVersion,
  type Reachability,
  type ReachabilityRecord,
  removeNodes,
  removeObservers,
} from "./reachability.js";
import {
  binarySearch,
  findSorted,
  isStrictlySorted,
  sameElements,
  sortedUnique,
  upsertSorted,
} from "./sorted-array.js";
import {
  compareUniqueAddresses,
  type UniqueAddress,
  uniqueAddressToString,
} from "./unique-address.js";
import {
  emptyVectorClock,
  incrementClock,
  mergeClocks,
  pruneClock,
  pruneClockNodes,
  type VectorClock,
} from "./vector-clock.js";

/** A removed node and when it was removed (ms, caller's clock). */
export interface Tombstone {
  readonly node: UniqueAddress;
  readonly removedAtMs: number;
}

/** Convergence bookkeeping carried with the gossip. */
export interface GossipOverview {
  /** Nodes that have seen this exact version, sorted. */
  readonly seen: readonly UniqueAddress[];
  readonly reachability: Reachability;
}

/** The gossiped cluster state. Immutable; change it with this module's functions. */
export interface Gossip {
  /** Sorted by member order, one per node. */
  readonly members: readonly Member[];
  readonly overview: GossipOverview;
  readonly version: VectorClock;
  /** Sorted by node. */
  readonly tombstones: readonly Tombstone[];
}

/** Parts of a gossip, any order; absent parts are empty. */
export interface GossipFields {
  readonly members?: Iterable<Member>;
  readonly seen?: Iterable<UniqueAddress>;
  readonly reachability?: Reachability;
  readonly version?: VectorClock;
  readonly tombstones?: Iterable<Tombstone>;
}

/** The vector-clock key of a node's own entry in the gossip version. */
export function clockKeyOf(node: UniqueAddress): string {
  return uniqueAddressToString(node);
}

const byNode = (m: Member, node: UniqueAddress) => compareUniqueAddresses(m.uniqueAddress, node);
const compareTombstones = (a: Tombstone, b: Tombstone) => compareUniqueAddresses(a.node, b.node);

/**
 * The invariants of the module comment. `prev` is a gossip already checked that `g` was
 * derived from: parts `g` shares with it (the same frozen arrays and table) are not
 * checked again, so marking a gossip as seen does not re-check every member.
 */
/**
 * Tables whose observers are members of a member list by construction (a merge
 * restricted to that list's nodes): the invariant check skips them for that list.
 */
const membersOfTable = new WeakMap<Reachability, readonly Member[]>();

/**
 * Membership of a node in a member list: by identity first (decoded nodes are interned,
 * so a member's node is usually the very object a gossip names), else by search. The
 * node sets are kept per list (the WeakMap keeps none alive).
 */
const memberNodeSets = new WeakMap<readonly Member[], ReadonlySet<UniqueAddress>>();

function memberTest(members: readonly Member[]): (n: UniqueAddress) => boolean {
  let nodes = memberNodeSets.get(members);
  if (nodes === undefined) {
    nodes = new Set(members.map((m) => m.uniqueAddress));
    // only a frozen list stays the same list
    if (Object.isFrozen(members)) memberNodeSets.set(members, nodes);
  }
  const set = nodes;
  return (n) => set.has(n) || binarySearch(members, n, byNode) >= 0;
}

function assertInvariants(g: Gossip, prev?: Gossip, seenChecked = false): void {
  const { members, overview, tombstones } = g;
  const membersSame = prev !== undefined && members === prev.members;
  const tombstonesSame = prev !== undefined && tombstones === prev.tombstones;
  const seenSame = (prev !== undefined && overview.seen === prev.overview.seen) || seenChecked;
  const reachabilitySame =
    prev !== undefined && overview.reachability === prev.overview.reachability;
  if (!membersSame)
    assert(isStrictlySorted(members, compareMembers), "gossip members unsorted or duplicated");
  if (!seenSame)
    assert(isStrictlySorted(overview.seen, compareUniqueAddresses), "gossip seen unsorted");
  if (!tombstonesSame)
    assert(isStrictlySorted(tombstones, compareTombstones), "gossip tombstones unsorted");
  const isMember = memberTest(members);
  // indexed loops: this runs on every received gossip, and a for-of that V8 has not
  // optimized allocates an iterator result per element
  if (!membersSame || !tombstonesSame)
    for (let i = 0; i < members.length; i++) {
      const m = members[i] as Member;
      if (m.status === "removed") fail(`live member with status removed: ${key(m.uniqueAddress)}`);
      if (tombstones.length > 0)
        if (hasTombstone(g, m.uniqueAddress)) fail(`tombstoned member: ${key(m.uniqueAddress)}`);
    }
  if (!membersSame || !seenSame) {
    const seen = overview.seen;
    for (let i = 0; i < seen.length; i++) {
      const n = seen[i] as UniqueAddress;
      if (!isMember(n)) fail(`seen by non-member: ${key(n)}`);
    }
  }
  if (
    (!membersSame || !reachabilitySame) &&
    membersOfTable.get(overview.reachability) !== members
  ) {
    // rows are sorted by observer: each observer is checked once, at its first row
    const { records, versions } = overview.reachability;
    let last: UniqueAddress | undefined;
    for (let i = 0; i < records.length; i++) {
      const observer = (records[i] as ReachabilityRecord).observer;
      if (observer === last) continue;
      last = observer;
      if (!isMember(observer)) fail(`reachability observer is not a member: ${key(observer)}`);
    }
    for (let i = 0; i < versions.length; i++) {
      const observer = (versions[i] as ObserverVersion).observer;
      if (!isMember(observer)) fail(`reachability version of non-member: ${key(observer)}`);
    }
  }
  if (!tombstonesSame)
    for (const t of tombstones)
      if (!Number.isFinite(t.removedAtMs)) fail(`bad tombstone time for ${key(t.node)}`);
}

function key(node: UniqueAddress): string {
  return uniqueAddressToString(node);
}

/** `a` itself when it is frozen already (immutable, so it can be shared), else a frozen copy. */
function frozen<T>(a: readonly T[]): readonly T[] {
  return Object.isFrozen(a) ? a : Object.freeze(a.slice());
}

/**
 * A checked gossip. Frozen parts are shared, not copied: a gossip derived from another
 * (seen, version) keeps the other's members, so readers can tell by identity that the
 * members did not change (cluster-events.ts, the heartbeat ring of the machine).
 */
function build(
  members: readonly Member[],
  seen: readonly UniqueAddress[],
  reachability: Reachability,
  version: VectorClock,
  tombstones: readonly Tombstone[],
  prev?: Gossip,
  seenChecked = false,
): Gossip {
  const g: Gossip = Object.freeze({
    members: frozen(members),
    overview: Object.freeze({ seen: frozen(seen), reachability }),
    version,
    tombstones: frozen(tombstones),
  });
  assertInvariants(g, prev, seenChecked);
  return g;
}

/**
 * A copy of `g` with another seen set that the caller built as a sorted subset of
 * `g.members` (the seen invariant holds by construction: not re-checked, which would cost
 * a search per seen node on every seen mark).
 */
function rebuildSeenOfMembers(g: Gossip, seen: readonly UniqueAddress[]): Gossip {
  const { members, overview, version, tombstones } = g;
  return build(members, seen, overview.reachability, version, tombstones, g, true);
}

interface Patch {
  readonly members?: readonly Member[];
  readonly seen?: readonly UniqueAddress[];
  readonly reachability?: Reachability;
  readonly version?: VectorClock;
  readonly tombstones?: readonly Tombstone[];
}

/** A copy of `g` with sorted replacement parts. */
function rebuild(g: Gossip, patch: Patch): Gossip {
  return build(
    patch.members ?? g.members,
    patch.seen ?? g.overview.seen,
    patch.reachability ?? g.overview.reachability,
    patch.version ?? g.version,
    patch.tombstones ?? g.tombstones,
    g,
  );
}

/** The empty gossip. */
export const emptyGossip: Gossip = build([], [], emptyReachability, emptyVectorClock, []);

/** A gossip from its parts (sorted here); duplicates and broken invariants assert. */
export function gossipOf(fields: GossipFields): Gossip {
  const members = [...(fields.members ?? [])].sort(compareMembers);
  const seen = sortedUnique(fields.seen ?? [], compareUniqueAddresses);
  const tombstones = [...(fields.tombstones ?? [])].map((t) => Object.freeze({ ...t }));
  tombstones.sort(compareTombstones);
  return build(
    members,
    seen,
    fields.reachability ?? emptyReachability,
    fields.version ?? emptyVectorClock,
    tombstones,
  );
}

/**
 * A gossip on the member list of `base` (shared, not checked again) with the other parts
 * given and an empty seen set: a compact gossip decoded with the receiver's own member
 * list (gossip-logic.ts, "Compact gossip"). The other parts are checked as by gossipOf.
 */
export function gossipOnMembersOf(
  base: Gossip,
  fields: Pick<GossipFields, "reachability" | "version" | "tombstones">,
): Gossip {
  const tombstones = [...(fields.tombstones ?? [])].map((t) => Object.freeze({ ...t }));
  tombstones.sort(compareTombstones);
  return build(
    base.members,
    [],
    fields.reachability ?? emptyReachability,
    fields.version ?? emptyVectorClock,
    tombstones,
    base,
  );
}

/** The member with node `node`, or undefined. */
export function findMember(g: Gossip, node: UniqueAddress): Member | undefined {
  return findSorted(g.members, node, byNode);
}

/** True if `node` is a member. */
export function hasMember(g: Gossip, node: UniqueAddress): boolean {
  return binarySearch(g.members, node, byNode) >= 0;
}

/** True if `node` was removed and its tombstone is still kept. */
export function hasTombstone(g: Gossip, node: UniqueAddress): boolean {
  return binarySearch(g.tombstones, node, (t, n) => compareUniqueAddresses(t.node, n)) >= 0;
}

/** The data centers of all members, sorted. */
export function allDataCenters(g: Gossip): string[] {
  return [...new Set(g.members.map((m) => m.dataCenter))].sort();
}

/** True if members span more than one data center. */
export function isMultiDc(g: Gossip): boolean {
  let multi = multiDcOfMembers.get(g.members);
  if (multi === undefined) {
    const first = g.members[0];
    multi = first !== undefined && g.members.some((m) => m.dataCenter !== first.dataCenter);
    multiDcOfMembers.set(g.members, multi);
  }
  return multi;
}

/** isMultiDc per member list (immutable; asked on every gossip tick of every node). */
const multiDcOfMembers = new WeakMap<readonly Member[], boolean>();

/** allRoles per member list (the list is immutable; every received gossip asks twice). */
const rolesOfMembers = new WeakMap<readonly Member[], readonly string[]>();

/** The ordinary roles of all members, sorted. */
export function allRoles(g: Gossip): readonly string[] {
  let roles = rolesOfMembers.get(g.members);
  if (roles === undefined) {
    roles = Object.freeze([...new Set(g.members.flatMap((m) => m.roles))].sort());
    rolesOfMembers.set(g.members, roles);
  }
  return roles;
}

/** True if the cluster has exactly one member. */
export function isSingletonCluster(g: Gossip): boolean {
  return g.members.length === 1;
}

/** Nodes that have seen this version (sorted). */
export function seenBy(g: Gossip): readonly UniqueAddress[] {
  return g.overview.seen;
}

/** True if `node` has seen this version. */
export function seenByNode(g: Gossip, node: UniqueAddress): boolean {
  return binarySearch(g.overview.seen, node, compareUniqueAddresses) >= 0;
}

/** The gossip marked as seen by `node` too (a member). */
export function withSeen(g: Gossip, node: UniqueAddress): Gossip {
  if (seenByNode(g, node)) return g;
  // the seen set was checked with g; only the added node is new
  if (!hasMember(g, node)) fail(`seen by non-member: ${key(node)}`);
  return rebuildSeenOfMembers(g, upsertSorted(g.overview.seen, node, compareUniqueAddresses));
}

/** The gossip not marked as seen by `node` (an exiting node holding back its removal). */
export function withoutSeen(g: Gossip, node: UniqueAddress): Gossip {
  if (!seenByNode(g, node)) return g;
  const seen = g.overview.seen.filter((n) => compareUniqueAddresses(n, node) !== 0);
  return rebuild(g, { seen });
}

/** The gossip marked as seen by `node` only (the node that just changed it). */
export function withOnlySeen(g: Gossip, node: UniqueAddress): Gossip {
  return rebuild(g, { seen: [node] });
}

/** The gossip seen by exactly `nodes` (members; any order, duplicates allowed). */
export function withSeenBy(g: Gossip, nodes: Iterable<UniqueAddress>): Gossip {
  return rebuild(g, { seen: sortedUnique(nodes, compareUniqueAddresses) });
}

/** The gossip seen by nobody. */
export function clearSeen(g: Gossip): Gossip {
  return g.overview.seen.length === 0 ? g : rebuild(g, { seen: [] });
}

/**
 * Bits of the seen set per element of its bitmap form (`seenBitsOf`): 7, so every element
 * is a MessagePack positive fixint (one byte on the wire).
 */
export const SEEN_BITS_PER_ELEMENT = 7;

/** seenBitsOf per gossip (gossips are immutable; the WeakMap keeps none alive). */
const seenBitsMemo = new WeakMap<Gossip, readonly number[]>();

/**
 * The seen set as a bitmap over the members: bit (i mod 7) of element floor(i / 7) is
 * member i (member order). Two gossips of the same version have the same members, so
 * this form of one node's seen set means the same to every node holding that version
 * (the seen status of gossip-logic.ts). Memoized per gossip; the result is frozen.
 */
export function seenBitsOf(g: Gossip): readonly number[] {
  const memo = seenBitsMemo.get(g);
  if (memo !== undefined) return memo;
  const members = g.members;
  const out = new Array<number>(Math.ceil(members.length / SEEN_BITS_PER_ELEMENT)).fill(0);
  let i = 0;
  // both sorted in node order (gossip invariant): one walk
  for (const n of g.overview.seen) {
    while (
      i < members.length &&
      compareUniqueAddresses((members[i] as Member).uniqueAddress, n) < 0
    )
      i++;
    if (i === members.length) break;
    if (compareUniqueAddresses((members[i] as Member).uniqueAddress, n) !== 0) continue;
    const e = Math.floor(i / SEEN_BITS_PER_ELEMENT);
    out[e] = (out[e] as number) | (1 << (i % SEEN_BITS_PER_ELEMENT));
  }
  Object.freeze(out);
  seenBitsMemo.set(g, out);
  return out;
}

/**
 * True if `bits` is a well-formed seen bitmap over the members of `g`: one element per 7
 * members, each an integer in [0, 127], no bit beyond the last member.
 */
export function isSeenBitsOf(g: Gossip, bits: readonly number[]): boolean {
  const n = g.members.length;
  if (bits.length !== Math.ceil(n / SEEN_BITS_PER_ELEMENT)) return false;
  for (let e = 0; e < bits.length; e++) {
    const b = bits[e];
    if (!Number.isInteger(b) || (b as number) < 0 || (b as number) >= 1 << SEEN_BITS_PER_ELEMENT)
      return false;
  }
  const tail = n % SEEN_BITS_PER_ELEMENT;
  return tail === 0 || (bits[bits.length - 1] as number) >> tail === 0;
}

/** True if the seen bitmap `a` has a member that `b` lacks (both over the same members). */
export function seenBitsExceed(a: readonly number[], b: readonly number[]): boolean {
  for (let e = 0; e < a.length; e++) if (((a[e] as number) & ~(b[e] ?? 0)) !== 0) return true;
  return false;
}

/**
 * `g` with the members of the seen bitmap `bits` (isSeenBitsOf) added to its seen set:
 * the union, as mergeSeen does for two gossips of the same version. `g` itself when
 * `bits` adds nobody (the common case: an identity check for readers).
 */
export function withSeenBits(g: Gossip, bits: readonly number[]): Gossip {
  const ours = seenBitsOf(g);
  if (!seenBitsExceed(bits, ours)) return g;
  const members = g.members;
  const seen: UniqueAddress[] = [];
  const union: number[] = [];
  for (let i = 0; i < members.length; i++) {
    const e = Math.floor(i / SEEN_BITS_PER_ELEMENT);
    const bit = 1 << (i % SEEN_BITS_PER_ELEMENT);
    if ((((ours[e] as number) | (bits[e] as number)) & bit) !== 0)
      seen.push((members[i] as Member).uniqueAddress);
    if (i % SEEN_BITS_PER_ELEMENT === 0) union.push((ours[e] as number) | (bits[e] as number));
  }
  // sorted and a subset of the members by construction (members are in node order)
  const merged = rebuildSeenOfMembers(g, seen);
  seenBitsMemo.set(merged, Object.freeze(union));
  return merged;
}

/**
 * `g` with the parts that have exactly the elements of `other`'s (the same objects: the
 * codec interns decoded members) replaced by `other`'s arrays and table, so readers see
 * by identity what did not change (a received gossip against the local one). `g` itself
 * when nothing is shared or everything already is. The invariants hold as they did for
 * `g`: each part has the same elements as before.
 */
export function sharingPartsOf(g: Gossip, other: Gossip): Gossip {
  const members =
    g.members !== other.members && sameElements(g.members, other.members)
      ? other.members
      : g.members;
  const tombstones =
    g.tombstones !== other.tombstones && sameElements(g.tombstones, other.tombstones)
      ? other.tombstones
      : g.tombstones;
  const r = g.overview.reachability;
  const o = other.overview.reachability;
  const reachability =
    r !== o && sameElements(r.records, o.records) && sameElements(r.versions, o.versions) ? o : r;
  if (members === g.members && tombstones === g.tombstones && reachability === r) return g;
  return Object.freeze({
    members,
    overview: Object.freeze({ seen: g.overview.seen, reachability }),
    version: g.version,
    tombstones,
  });
}

/** membersHashOf per member list (immutable; the WeakMap keeps none alive). */
const membersHashMemo = new WeakMap<readonly Member[], readonly [number, number]>();
/** The second seed of membersHashOf (any constant other than the first, 0). */
const MEMBERS_HASH_SEED_2 = 0x5bd1e995;

/**
 * A 64-bit hash of a member list (two murmur3 hashes, unsigned 32-bit, of its canonical
 * JSON: node, status, roles, app version, data center, up number of every member in
 * member order): equal lists hash equal on every node. A compact gossip names the member
 * list its receiver must hold by this hash (gossip-logic.ts, "Compact gossip").
 */
export function membersHashOf(members: readonly Member[]): readonly [number, number] {
  let h = membersHashMemo.get(members);
  if (h === undefined) {
    const text = JSON.stringify(
      members.map((m) => [
        key(m.uniqueAddress),
        m.status,
        m.roles,
        m.appVersion,
        m.dataCenter,
        m.upNumber,
      ]),
    );
    h = Object.freeze([murmur3OfString(text), murmur3OfString(text, MEMBERS_HASH_SEED_2)] as const);
    membersHashMemo.set(members, h);
  }
  return h;
}

/** True if two 64-bit hashes (membersHashOf, versionHashOf) are equal. */
export function sameHash(a: readonly [number, number], b: readonly [number, number]): boolean {
  return a[0] === b[0] && a[1] === b[1];
}

/** `g` with the union of both seen sets (for two gossips of the same version). */
export function mergeSeen(g: Gossip, other: Gossip): Gossip {
  if (other.overview.seen.length === 0 || other.overview.seen === g.overview.seen) return g;
  // the usual case: the same members (decoded content is shared), one walk of bitmaps
  if (other.members === g.members) return withSeenBits(g, seenBitsOf(other));
  const seen = sortedUnique([...g.overview.seen, ...other.overview.seen], compareUniqueAddresses);
  return rebuild(g, { seen: seen.filter((n) => hasMember(g, n)) });
}

/** The gossip with a new reachability table (observers must be members). */
export function withReachability(g: Gossip, reachability: Reachability): Gossip {
  return reachability === g.overview.reachability ? g : rebuild(g, { reachability });
}

/** The version with the entry `clockKey` incremented (a local change stamped by a node). */
export function incrementVersion(g: Gossip, clockKey: string): Gossip {
  return rebuild(g, { version: incrementClock(g.version, clockKey) });
}

/** The version without the entry `clockKey`. */
export function pruneVersion(g: Gossip, clockKey: string): Gossip {
  const version = pruneClock(g.version, clockKey);
  return version === g.version ? g : rebuild(g, { version });
}

/** The gossip with `member` added; unchanged if its node is already a member. */
export function addMember(g: Gossip, member: Member): Gossip {
  if (hasMember(g, member.uniqueAddress)) return g;
  return rebuild(g, { members: upsertSorted(g.members, member, compareMembers) });
}

/**
 * The gossip with `updated` members replacing those of the same node (new nodes are
 * added). A replacement must keep the status or make an allowed transition, else
 * IllegalMemberTransitionError: leader actions and downing build on this guard.
 */
export function updateMembers(g: Gossip, updated: Iterable<Member>): Gossip {
  let members: readonly Member[] = g.members;
  for (const m of updated) {
    const old = findSorted(members, m.uniqueAddress, byNode);
    if (old && old.status !== m.status && !canTransition(old.status, m.status))
      throw new IllegalMemberTransitionError(key(m.uniqueAddress), old.status, m.status);
    members = upsertSorted(members, m, compareMembers);
  }
  return members === g.members ? g : rebuild(g, { members });
}

/** The gossip with member `node` set to down and dropped from seen. */
export function markAsDown(g: Gossip, node: UniqueAddress): Gossip {
  const member = findMember(g, node);
  if (member === undefined) fail(`cannot mark a non-member as down: ${key(node)}`);
  const members = upsertSorted(g.members, withStatus(member, "down"), compareMembers);
  const seen = g.overview.seen.filter((n) => compareUniqueAddresses(n, node) !== 0);
  return rebuild(g, { members, seen });
}

/**
 * The gossip without `node`: dropped from members and seen, its reachability rows (as
 * observer or subject) and observer version deleted, its clock entry pruned, and a
 * tombstone recorded at `removedAtMs` so that merges never bring it back.
 */
export function removeMember(g: Gossip, node: UniqueAddress, removedAtMs: number): Gossip {
  const notNode = (n: UniqueAddress) => compareUniqueAddresses(n, node) !== 0;
  return rebuild(g, {
    members: g.members.filter((m) => notNode(m.uniqueAddress)),
    seen: g.overview.seen.filter(notNode),
    reachability: removeNodes(g.overview.reachability, [node]),
    version: pruneClock(g.version, clockKeyOf(node)),
    tombstones: upsertSorted(g.tombstones, Object.freeze({ node, removedAtMs }), compareTombstones),
  });
}

/** The gossip keeping only tombstones with `removedAtMs > removeEarlierThanMs`. */
export function pruneTombstones(g: Gossip, removeEarlierThanMs: number): Gossip {
  const tombstones = g.tombstones.filter((t) => t.removedAtMs > removeEarlierThanMs);
  return tombstones.length === g.tombstones.length ? g : rebuild(g, { tombstones });
}

/** Reachability without the observations of down members. */
export function reachabilityExcludingDownedObservers(g: Gossip): Reachability {
  const downed = g.members.filter((m) => m.status === "down").map((m) => m.uniqueAddress);
  return removeObservers(g.overview.reachability, downed);
}

/** True if `to` is a member and `from` has not recorded it as unreachable or terminated. */
export function isReachableInGossip(g: Gossip, from: UniqueAddress, to: UniqueAddress): boolean {
  return hasMember(g, to) && isReachableBy(g.overview.reachability, from, to);
}

/**
 * Merge of two concurrent gossips (commutative on members, versions and tombstones):
 * - tombstones: union, the later removal time on a tie;
 * - version: pointwise max, minus the entries of every tombstoned node;
 * - members: a node on both sides keeps its highest-precedence version; a node on one
 *   side only is dropped if down or exiting (the other side already removed it); a
 *   tombstoned node is dropped either way;
 * - reachability: per observer the newer row set, restricted to the merged members;
 * - seen: empty, nobody has seen the merged result yet.
 */
export function mergeGossip(a: Gossip, b: Gossip): Gossip {
  const tombstones = sameOrMerged(
    a.tombstones,
    b.tombstones,
    mergeTombstones(a.tombstones, b.tombstones),
  );
  const tombstoned = new Set(tombstones.map((t) => key(t.node)));
  const version = pruneClockNodes(
    mergeClocks(a.version, b.version),
    tombstones.map((t) => clockKeyOf(t.node)),
  );
  // the usual concurrent merge (observations of a crash spreading): one member list
  const members =
    a.members === b.members && sameElements(a.tombstones, b.tombstones)
      ? a.members
      : sameOrMerged(a.members, b.members, mergeMembers(a.members, b.members, tombstoned));
  const reachability = mergeReachability(
    a.overview.reachability,
    nodesOf(members),
    b.overview.reachability,
  );
  // restricted to the members' nodes: every observer is a member
  membersOfTable.set(reachability, members);
  // Parts equal to one side's are that side's frozen arrays and table: readers see by
  // identity that they did not change (the usual concurrent merge differs only in
  // reachability rows), and build re-checks only the parts that are new.
  const prev = members === b.members ? b : a;
  return build(members, [], reachability, version, tombstones, prev);
}

/** The nodes of a member list, in member order (kept per list: lists are immutable). */
const nodesOfMembers = new WeakMap<readonly Member[], readonly UniqueAddress[]>();

function nodesOf(members: readonly Member[]): readonly UniqueAddress[] {
  let nodes = nodesOfMembers.get(members);
  if (nodes === undefined) {
    nodes = Object.freeze(members.map((m) => m.uniqueAddress));
    nodesOfMembers.set(members, nodes);
  }
  return nodes;
}

/**
 * `a` or `b` when `merged` has exactly their elements (the same objects), else `merged`:
 * a merge result that equals one side keeps that side's frozen array.
 */
function sameOrMerged<T>(a: readonly T[], b: readonly T[], merged: readonly T[]): readonly T[] {
  if (sameElements(merged, a)) return a;
  if (sameElements(merged, b)) return b;
  return merged;
}

function mergeTombstones(a: readonly Tombstone[], b: readonly Tombstone[]): Tombstone[] {
  const all = [...a, ...b].sort((x, y) => compareTombstones(x, y) || x.removedAtMs - y.removedAtMs);
  return sortedUnique(all, compareTombstones); // keeps the last, i.e. the latest removal
}

function mergeMembers(
  a: readonly Member[],
  b: readonly Member[],
  tombstoned: ReadonlySet<string>,
): Member[] {
  const out: Member[] = [];
  const keepOneSided = (m: Member) =>
    m.status !== "down" && m.status !== "exiting" && !tombstoned.has(key(m.uniqueAddress));
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const x = a[i];
    const y = b[j];
    const c = x === undefined ? 1 : y === undefined ? -1 : compareMembers(x, y);
    if (c < 0) {
      if (keepOneSided(x as Member)) out.push(x as Member);
      i++;
    } else if (c > 0) {
      if (keepOneSided(y as Member)) out.push(y as Member);
      j++;
    } else {
      if (!tombstoned.has(key((x as Member).uniqueAddress)))
        out.push(highestPriorityOf(x as Member, y as Member));
      i++;
      j++;
    }
  }
  return out;
}
