/**
 * The decisions of the push-pull gossip protocol (docs/cluster.md, "Gossip and
 * convergence"), as pure functions of one node's membership view: whom to gossip with, what
 * to do with a received gossip or gossip status, and how many rounds to run per interval.
 *
 * - Target choice is random but biased: with probability p (0.8 by default, reduced
 *   linearly above reduceGossipDifferentViewProbabilityAboveMembers members down to p/10
 *   at three times that size) only members that have not seen the current version are
 *   candidates. A target that has seen the current version gets only the small status
 *   digest, everyone else the full gossip. Never self, never a member that a non-down
 *   observer records as unreachable (membership-state.ts validNodeForGossip; Akka's rule
 *   since 2.6: before it, a crashed member stayed a candidate for every member until its
 *   removal), only members of the self DC.
 * - A received gossip is compared with the local one by vector clock: same -> union of
 *   the seen sets; remote newer -> adopt it; remote older -> send ours back; concurrent
 *   -> merge and send the merge back. The result is marked as seen by self, and the
 *   sender gets a reply whenever it does not know that self has seen the winner.
 * - A received status digest (version + seen digest) is answered with the full gossip
 *   when ours is newer or concurrent, with our own status (a request for the full gossip)
 *   when theirs is newer, and not at all when equal.
 * - Seen status (shardkit; docs/cluster-scale.md, "1 000 members"): when both sides hold
 *   the same version, only the seen sets can differ, and the version fixes the member
 *   list, so a seen set travels as a bitmap over those members inside the status
 *   (`GossipStatus.seen`) instead of as a full gossip. A status carrying a seen set of
 *   the same version is merged into ours (the union, as for a full gossip of the same
 *   version) and answered with our seen set only if ours has marks the sender lacks; a
 *   digest-only status of the same version whose digest differs is answered with our
 *   seen set (`send-seen`), not with the full gossip. The reply to a received full gossip
 *   whose sender only lacks our seen mark (same or newer version) is a seen status too
 *   (`replyWith`). The machine also leads a gossip round to a member that has not seen
 *   the version with a seen status: a member that already has the version merges it; one
 *   that lacks it answers with its older status, and the full gossip follows.
 *
 * - Hashed status (shardkit; docs/cluster-scale.md, "1 000 members"): the version of a
 *   cluster grows by one entry per member that ever changed the state (after a failure
 *   wave, every observer that marked a member unreachable: most members), and the status
 *   carries it in full. The status of a gossip round (a digest to a member that has seen
 *   our version, a seen status to one that has not: after a broadcast it usually holds
 *   the version) carries the version's 64-bit hash instead (`versionHashOf`). A receiver
 *   holding a version of that hash handles it as a status of its own version; any other
 *   receiver answers with its full status, and the exchange goes on as for a full one
 *   (one message more). Replies are never hashed: a member of an earlier version reads
 *   the empty version of a hashed status as an older one and answers with its full
 *   gossip, and our reply to that must be one it understands.
 *
 * - Compact gossip (shardkit): the full gossip is mostly its member list (about 50 bytes
 *   per member), and when a member's observations of a crash spread, most exchanges are
 *   between members holding the same member list and concurrent versions that differ only
 *   in reachability rows. A status and a gossip carry the sender's hash of its member list
 *   (`membersHashOf`); the full gossip that answers one whose hash equals ours goes
 *   without the member list (`compact`), and the receiver decodes it with its own (the
 *   codec checks the hash; a receiver whose member list changed in between answers it
 *   with its full status, and the exchange goes on from there). A member of an earlier version sends no hash, so no reply
 *   to it is compact (a round's push of an own version may be: "Own versions").
 *
 * - Compact status (shardkit): after a failure wave the version has an entry per
 *   observer (most members), and the statuses that still carry it whole, the replies,
 *   were most of the bytes a 1 000-member cluster sent while the observations spread.
 *   A reply status (`send-status`, `send-seen`, and the seen reply to a full gossip) to
 *   a member whose status or gossip hashed its member list like ours, or to a hashed
 *   status (whose sender, of this version, usually holds our member list), names the
 *   version's entries by member index instead of by key (`compact`). A receiver whose member list hashes otherwise cannot read it and
 *   answers with its own full status (the machine's `status-unreadable` input), so the
 *   exchange goes on with one message more. A member of an earlier version sends neither
 *   hash, so it never gets a compact status.
 *
 * - Own versions (shardkit; the machine's gossip round, membership-machine.ts): the
 *   seen-status lead above assumes that a target that has not seen our version holds it
 *   anyway, which is true of a version others hold (we received it, or broadcast it) but
 *   not of one we just made ourselves by a merge or a reachability mark, which is what
 *   every member holds while a failure wave's observations spread. A round to a target
 *   that has not seen such a version sends the gossip itself, as Akka does, without the
 *   member list when ours is that of a state others hold (a receiver with another list
 *   cannot decode it and answers with its full status, as for an unreadable status; a
 *   member of an earlier version cannot read it at all: docs/evolution.md asks for a
 *   full restart across this change).
 *   The version counts as held by others once we receive it, or a status of it, from
 *   another member.
 *
 * Randomness is an input (`RandomSource`), time is an input (`nowMs`); nothing here
 * sends anything: the results say what the driver must send.
 */
import {
  asciiJoined,
  type Murmur3Snapshot,
  Murmur3Stream,
  murmur3_32,
  murmur3OfJoined,
} from "../../base/hash.js";
import { type ClusterEvent, diffClusterEvents } from "./cluster-events.js";
import {
  findMember,
  type Gossip,
  hasMember,
  hasTombstone,
  isMultiDc,
  isSeenBitsOf,
  membersHashOf,
  mergeGossip,
  mergeSeen,
  SEEN_BITS_PER_ELEMENT,
  sameHash,
  seenBitsExceed,
  seenBitsOf,
  seenByNode,
  sharingPartsOf,
  withSeen,
  withSeenBits,
} from "./gossip.js";
import type { Member } from "./member.js";
import {
  dcReachabilityExcludingDownedObservers,
  type MembershipState,
} from "./membership-state.js";
import {
  allUnreachableOrTerminated,
  isReachableBy,
  isUnreachableOrTerminated,
  type Reachability,
  type ReachabilityRecord,
  ReachabilityStatus,
  recordsFrom,
} from "./reachability.js";
import { sameElements } from "./sorted-array.js";
import {
  type UniqueAddress,
  uniqueAddressEquals,
  uniqueAddressToString,
} from "./unique-address.js";
import { ClockOrdering, compareClocks, type VectorClock } from "./vector-clock.js";

/** Source of randomness (the Random port's shape; core does not import ports). */
export interface RandomSource {
  /** Uniform float in [0, 1). */
  next(): number;
  /** Uniform integer in [0, maxExclusive). */
  nextInt(maxExclusive: number): number;
}

/** Settings of target selection (see cluster-settings.ts). */
export interface GossipTargetOptions {
  readonly gossipDifferentViewProbability: number;
  readonly reduceGossipDifferentViewProbabilityAboveMembers: number;
}

/** The floor of the reduced probability is this fraction of the configured one. */
const REDUCED_PROBABILITY_FLOOR_FRACTION = 0.1;
/** The probability reaches its floor at this multiple of the reduction threshold. */
const REDUCTION_END_FACTOR = 3;
/** Gossip rounds per interval while fewer than half of the members have seen the state. */
export const GOSSIP_SPEEDUP_ROUNDS = 3;

/**
 * The probability of preferring a member with a different view for a cluster of
 * `clusterSize` members: the configured p up to the threshold, then linearly down to
 * p/10 at three times the threshold, and p/10 beyond.
 */
export function adjustedGossipDifferentViewProbability(
  clusterSize: number,
  options: GossipTargetOptions,
): number {
  const p = options.gossipDifferentViewProbability;
  const low = options.reduceGossipDifferentViewProbabilityAboveMembers;
  if (clusterSize <= low) return p;
  const high = low * REDUCTION_END_FACTOR;
  const floor = p * REDUCED_PROBABILITY_FLOOR_FRACTION;
  if (clusterSize >= high) return floor;
  return p + ((clusterSize - low) * (floor - p)) / (high - low);
}

/** A chosen gossip partner and what to send it. */
export interface GossipTarget {
  readonly node: UniqueAddress;
  /** "status" when the target has already seen the current version (push-pull digest). */
  readonly send: "gossip" | "status";
}

/**
 * The partner of this gossip round, or undefined when there is none (a one-node
 * cluster, or every other member is unreachable from self). Consumes exactly one
 * `next()` and, when there are candidates, one `nextInt()`.
 */
export function selectGossipTarget(
  state: MembershipState,
  random: RandomSource,
  options: GossipTargetOptions,
): GossipTarget | undefined {
  const g = state.latestGossip;
  const { valid, notSeen: unseen } = gossipCandidatesOf(state);
  const preferDifferentView =
    random.next() < adjustedGossipDifferentViewProbability(g.members.length, options);
  const notSeen = preferDifferentView ? unseen : [];
  const candidates = notSeen.length > 0 ? notSeen : valid;
  if (candidates.length === 0) return undefined;
  const node = candidates[random.nextInt(candidates.length)] as UniqueAddress;
  return { node, send: seenByNode(g, node) ? "status" : "gossip" };
}

interface GossipCandidates {
  readonly selfDc: string;
  /** Valid gossip partners in member order, and those of them that have not seen `g`. */
  readonly valid: readonly UniqueAddress[];
  readonly notSeen: readonly UniqueAddress[];
  /** gossipRoundsPerInterval of this view. */
  readonly rounds: number;
}

/**
 * The candidates of each node's last view: target choice runs up to three times per
 * gossip interval on the same, usually unchanged, gossip, and each choice would walk all
 * members. Kept per self node (its last gossip only), not per gossip: in the simulator
 * hundreds of nodes share decoded gossips and member lists, and a memo per gossip was
 * overwritten by each node in turn. The WeakMaps keep no node alive.
 */
const candidatesMemo = new WeakMap<
  UniqueAddress,
  { readonly gossip: Gossip; readonly candidates: GossipCandidates }
>();

/** The valid partners of a member list and reachability table (see validPartnersOf). */
interface ValidPartners {
  readonly members: readonly Member[];
  readonly reachability: Reachability;
  readonly selfDc: string;
  /** What the walk excluded: the unreachable/terminated nodes, and self's own rows' subjects. */
  readonly unreachable: readonly UniqueAddress[];
  readonly fromSelf: readonly UniqueAddress[];
  /** Valid partners in member order, and each one's index in the member list. */
  readonly nodes: readonly UniqueAddress[];
  readonly indices: readonly number[];
}

/**
 * validPartnersOf per self node, for its last member list and reachability table: who is
 * a valid partner depends on those only, not on the seen set, and the seen set is what
 * changes most often (every member marks every version). While a version spreads, each
 * new seen mark made a new gossip and the walk over all members with its lookups ran
 * again on every tick.
 */
const validPartnersMemo = new WeakMap<UniqueAddress, ValidPartners>();

/** The self-DC members that are valid gossip partners (validNodeForGossip), in member order. */
function validPartnersOf(state: MembershipState): ValidPartners {
  const g = state.latestGossip;
  const reachability = g.overview.reachability;
  const memo = validPartnersMemo.get(state.selfUniqueAddress);
  if (
    memo !== undefined &&
    memo.members === g.members &&
    memo.reachability === reachability &&
    memo.selfDc === state.selfDc
  )
    return memo;
  // validNodeForGossip for each self-DC member, its lookups done once per walk: what self
  // observes as one set (not a search of the table per member), the member itself from
  // the walk (not a search of the member list)
  const self = state.selfUniqueAddress;
  const fromSelf: UniqueAddress[] = [];
  const selfRows = recordsFrom(reachability, self);
  for (let i = 0; i < selfRows.length; i++) {
    const rec = selfRows[i] as ReachabilityRecord;
    if (rec.status !== ReachabilityStatus.Reachable) fromSelf.push(rec.subject);
  }
  const dcReachability = dcReachabilityExcludingDownedObservers(state);
  const unreachable = allUnreachableOrTerminated(dcReachability);
  // a new table that excludes the same nodes (while a crash's observations spread, most
  // new rows are about nodes already unreachable): the same partners
  if (
    memo !== undefined &&
    memo.members === g.members &&
    memo.selfDc === state.selfDc &&
    sameElements(memo.unreachable, unreachable) &&
    sameElements(memo.fromSelf, fromSelf)
  ) {
    const same = { ...memo, reachability };
    validPartnersMemo.set(self, same);
    return same;
  }
  const notReachableFromSelf = new Set<string>(fromSelf.map(uniqueAddressToString));
  const nodes: UniqueAddress[] = [];
  const indices: number[] = [];
  g.members.forEach((m, i) => {
    const node = m.uniqueAddress;
    if (
      m.dataCenter === state.selfDc &&
      !uniqueAddressEquals(node, self) &&
      !notReachableFromSelf.has(uniqueAddressToString(node)) &&
      !isUnreachableOrTerminated(dcReachability, node)
    ) {
      nodes.push(node);
      indices.push(i);
    }
  });
  const out: ValidPartners = {
    members: g.members,
    reachability,
    selfDc: state.selfDc,
    unreachable,
    fromSelf,
    nodes,
    indices,
  };
  validPartnersMemo.set(state.selfUniqueAddress, out);
  return out;
}

/** The number of 1 bits of a seen-bitmap element (7 bits used). */
function bitCount(x: number): number {
  let n = 0;
  for (let v = x; v !== 0; v &= v - 1) n++;
  return n;
}

function gossipCandidatesOf(state: MembershipState): GossipCandidates {
  const g = state.latestGossip;
  const memo = candidatesMemo.get(state.selfUniqueAddress);
  if (memo !== undefined && memo.gossip === g && memo.candidates.selfDc === state.selfDc)
    return memo.candidates;
  const partners = validPartnersOf(state);
  // the seen set as a bitmap over the members (memoized per gossip): bit of member i
  const bits = seenBitsOf(g);
  const seenAt = (i: number) =>
    (((bits[Math.floor(i / SEEN_BITS_PER_ELEMENT)] as number) >> (i % SEEN_BITS_PER_ELEMENT)) &
      1) ===
    1;
  // over dcMembers (all members of a one-DC cluster)
  const multiDc = isMultiDc(g);
  let dcSize = 0;
  let seen = 0;
  if (multiDc)
    g.members.forEach((m, i) => {
      if (m.dataCenter !== state.selfDc) return;
      dcSize++;
      if (seenAt(i)) seen++;
    });
  else {
    // one DC: the members are the DC, the marks in the bitmap those that have seen
    dcSize = g.members.length;
    for (let e = 0; e < bits.length; e++) seen += bitCount(bits[e] as number);
  }
  const c: GossipCandidates = {
    selfDc: state.selfDc,
    valid: partners.nodes,
    notSeen: partners.nodes.filter((_, k) => !seenAt(partners.indices[k] as number)),
    rounds: seen * 2 < dcSize ? GOSSIP_SPEEDUP_ROUNDS : 1,
  };
  candidatesMemo.set(state.selfUniqueAddress, { gossip: g, candidates: c });
  return c;
}

/**
 * Gossip rounds to run in the next interval: GOSSIP_SPEEDUP_ROUNDS while fewer than half
 * of the self-DC members have seen the current version (early dissemination), else 1.
 */
export function gossipRoundsPerInterval(state: MembershipState): number {
  return gossipCandidatesOf(state).rounds;
}

/** How a received gossip relates to the local one ("newer": the remote is newer). */
export const GossipComparison = {
  Same: "same",
  Newer: "newer",
  Older: "older",
  Concurrent: "concurrent",
} as const;

/** How a received gossip relates to the local one ("newer": the remote is newer). */
export type GossipComparison = (typeof GossipComparison)[keyof typeof GossipComparison];

/** Compares the versions of the local and the received gossip. */
export function compareIncomingGossip(local: Gossip, remote: Gossip): GossipComparison {
  switch (compareClocks(remote.version, local.version)) {
    case ClockOrdering.Same:
      return GossipComparison.Same;
    case ClockOrdering.After:
      return GossipComparison.Newer;
    case ClockOrdering.Before:
      return GossipComparison.Older;
    case ClockOrdering.Concurrent:
      return GossipComparison.Concurrent;
  }
}

/**
 * The gossip that results from receiving `remote` (not yet marked as seen by self):
 * same -> remote with the union of both seen sets; newer -> remote; older -> local;
 * concurrent -> the merge (seen by nobody).
 */
export function gossipAfterReceive(
  local: Gossip,
  remote: Gossip,
  comparison: GossipComparison,
): Gossip {
  switch (comparison) {
    // unchanged parts become the local ones by identity (sharingPartsOf): the caches of
    // the machine and the event diff then see that they did not change
    case GossipComparison.Same:
      return mergeSeen(sharingPartsOf(remote, local), local);
    case GossipComparison.Newer:
      return sharingPartsOf(remote, local);
    case GossipComparison.Older:
      return local;
    case GossipComparison.Concurrent:
      return mergeGossip(local, remote);
  }
}

/** A full gossip in transit. */
export interface GossipEnvelope {
  readonly from: UniqueAddress;
  readonly to: UniqueAddress;
  readonly gossip: Gossip;
  /**
   * When the envelope entered the receiver's queue, in the RECEIVER's clock (the driver
   * stamps it on decode). The time-to-live bounds how long gossip waits in the
   * receiver's queue; clocks of different nodes are never compared.
   */
  readonly sentAtMs: number;
  /** The sender's hash of the gossip's member list, when it sent one (compact replies). */
  readonly membersHash?: readonly [number, number];
}

/** Why a received gossip was ignored. */
export const GossipIgnoredReason = {
  /** It waited longer than gossipTimeToLiveMs. */
  Expired: "expired",
  /** Addressed to another incarnation. */
  WrongRecipient: "wrong-recipient",
  /** The sender was removed from the cluster (tombstoned locally). */
  SenderRemoved: "sender-removed",
  /** The sender is not a member of the local view (e.g. self has not joined yet). */
  UnknownSender: "unknown-sender",
  /** Self observes the sender as unreachable. */
  SenderUnreachable: "sender-unreachable",
  /** The remote gossip has a tombstone for self: self was removed; shut down. */
  SelfRemoved: "self-removed",
  /** The remote gossip does not contain self (yet). */
  SelfNotMember: "self-not-member",
} as const;

/** Why a received gossip was ignored. */
export type GossipIgnoredReason = (typeof GossipIgnoredReason)[keyof typeof GossipIgnoredReason];

/** Options of receiveGossip. */
export interface ReceiveGossipOptions {
  readonly gossipTimeToLiveMs: number;
  /** While self runs its exiting tasks it does not mark gossip as seen (delays removal). */
  readonly exitingTasksInProgress?: boolean;
}

/** Outcome of receiving a gossip. */
export type ReceiveGossipResult =
  | { readonly type: "ignored"; readonly reason: GossipIgnoredReason }
  | {
      readonly type: "accepted";
      readonly comparison: GossipComparison;
      readonly state: MembershipState;
      /** Send `state.latestGossip` back to this node (undefined: no reply). */
      readonly replyTo: UniqueAddress | undefined;
      /**
       * How to reply: "seen" (a status with our seen set) when the sender holds this
       * version already and lacks only our seen mark (same or newer comparison), else
       * "gossip" (the full gossip).
       */
      readonly replyWith: "gossip" | "seen";
      /**
       * The sender's hash of its member list equals ours: a "gossip" reply may go
       * without the member list (see "Compact gossip"), a "seen" reply may name the
       * version's entries by member index (see "Compact status").
       */
      readonly replyCompact: boolean;
      readonly events: readonly ClusterEvent[];
    };

function ignoreReason(
  state: MembershipState,
  envelope: GossipEnvelope,
  nowMs: number,
  ttlMs: number,
): GossipIgnoredReason | undefined {
  const local = state.latestGossip;
  const self = state.selfUniqueAddress;
  if (nowMs - envelope.sentAtMs > ttlMs) return GossipIgnoredReason.Expired;
  if (!uniqueAddressEquals(envelope.to, self)) return GossipIgnoredReason.WrongRecipient;
  if (hasTombstone(local, envelope.from)) return GossipIgnoredReason.SenderRemoved;
  if (!hasMember(local, envelope.from)) return GossipIgnoredReason.UnknownSender;
  if (!isReachableBy(local.overview.reachability, self, envelope.from))
    return GossipIgnoredReason.SenderUnreachable;
  if (hasTombstone(envelope.gossip, self)) return GossipIgnoredReason.SelfRemoved;
  if (findMember(envelope.gossip, self) === undefined) return GossipIgnoredReason.SelfNotMember;
  return undefined;
}

/**
 * Handles a received full gossip (see the module comment). Ignored gossip leaves the
 * state untouched and says why.
 */
export function receiveGossip(
  state: MembershipState,
  envelope: GossipEnvelope,
  nowMs: number,
  options: ReceiveGossipOptions,
): ReceiveGossipResult {
  const reason = ignoreReason(state, envelope, nowMs, options.gossipTimeToLiveMs);
  if (reason !== undefined) return { type: "ignored", reason };
  const local = state.latestGossip;
  const remote = envelope.gossip;
  const self = state.selfUniqueAddress;
  const comparison = compareIncomingGossip(local, remote);
  const winner = gossipAfterReceive(local, remote, comparison);
  const marking = options.exitingTasksInProgress !== true;
  const latest = marking ? withSeen(winner, self) : winner;
  const senderKnowsWeSaw = !marking || seenByNode(remote, self);
  const talkBack =
    comparison === GossipComparison.Older ||
    comparison === GossipComparison.Concurrent ||
    !senderKnowsWeSaw;
  const next: MembershipState = Object.freeze({ ...state, latestGossip: latest });
  return {
    type: "accepted",
    comparison,
    state: next,
    replyTo: talkBack ? envelope.from : undefined,
    replyWith:
      comparison === GossipComparison.Same || comparison === GossipComparison.Newer
        ? "seen"
        : "gossip",
    replyCompact:
      envelope.membersHash !== undefined &&
      sameHash(envelope.membersHash, membersHashOf(latest.members)),
    events: diffClusterEvents(state, next),
  };
}

/** The push-pull digest: the version and a digest of the seen set. */
export interface GossipStatus {
  readonly from: UniqueAddress;
  /** The sender's version (meaningless when `versionHash` is set). */
  readonly version: VectorClock;
  /** A hashed status: the sender's version as versionHashOf, instead of `version`. */
  readonly versionHash?: readonly [number, number];
  /** The sender's membersHashOf, when it sent one (see "Compact gossip"). */
  readonly membersHash?: readonly [number, number];
  /** murmur3 of the sorted seen set (see seenDigestOf). */
  readonly seenDigest: number;
  /**
   * The seen set itself as a bitmap over the version's members (seenBitsOf), when the
   * sender wants to share it (a seen status); absent in a digest-only status.
   */
  readonly seen?: readonly number[];
}

/** versionHashOf per clock (immutable; the WeakMap keeps none alive). */
const versionHashMemo = new WeakMap<VectorClock, readonly [number, number]>();
/** The second seed of versionHashOf (any constant other than the first, 0). */
const VERSION_HASH_SEED_2 = 0x9747b28c;

/**
 * A 64-bit hash of a version (two murmur3 hashes, unsigned 32-bit, with different seeds,
 * of its canonical text): equal versions hash equal on every node, and two different
 * versions of one cluster collide with a probability of about 2^-64.
 */
export function versionHashOf(v: VectorClock): readonly [number, number] {
  let h = versionHashMemo.get(v);
  if (h === undefined) {
    // entries by index, not destructured: array destructuring runs the iterator protocol
    // the hashes of the entries' text joined, without the joined text (base/hash.ts)
    const entries = v.entries;
    const texts = entries.map((e) => `${e[0]}\u0000${e[1]}`);
    const at = (i: number) => texts[i] as string;
    // the text's bytes written once for both hashes
    const bytes = asciiJoined(texts.length, at, "\n");
    h = Object.freeze(
      bytes !== undefined
        ? ([murmur3_32(bytes), murmur3_32(bytes, VERSION_HASH_SEED_2)] as const)
        : ([
            murmur3OfJoined(texts.length, at, "\n"),
            murmur3OfJoined(texts.length, at, "\n", VERSION_HASH_SEED_2),
          ] as const),
    );
    versionHashMemo.set(v, h);
  }
  return h;
}

/** seenDigestOf per gossip (immutable; the WeakMap keeps none alive). */
/**
 * Digests per seen list (frozen, shared by the gossips that differ in other parts: a
 * merge or a new reachability row keeps the seen list of the gossip it came from).
 */
const seenDigestMemo = new WeakMap<readonly UniqueAddress[], number>();

/**
 * A digest of the seen set: murmur3 (unsigned 32-bit) of the sorted node strings joined
 * by "\n". Per seen list (memoized); computed from the hash state a recent list with the
 * same first nodes reached there (see DIGEST_CHECKPOINT_NODES), such as the last list
 * digested for `holder` (the node whose view it is: its next list is mostly its last one
 * with some nodes added).
 */
export function seenDigestOf(g: Gossip, holder?: UniqueAddress): number {
  const seen = g.overview.seen;
  let d = seenDigestMemo.get(seen);
  if (d === undefined) {
    d = computeSeenDigest(seen, holder);
    seenDigestMemo.set(seen, d);
  }
  return d;
}

/**
 * The digest's hash state is kept before every this many nodes of a list. A new seen
 * list is mostly an older one with a few nodes added (while a version spreads, every
 * receipt adds some), so its hash restarts from the state the older list had before
 * the first node where they differ: on average half a list of node strings is not hashed
 * again. At 1 000 members a digest hashes about 30 KB.
 */
export const DIGEST_CHECKPOINT_NODES = 32;
/** Seen lists (per process) whose hash states a new digest may start from. */
export const DIGEST_RECENT_LISTS = 8;

interface DigestTrace {
  readonly seen: readonly UniqueAddress[];
  /** checkpoints[c]: the state before node c * DIGEST_CHECKPOINT_NODES (and its separator). */
  readonly checkpoints: readonly Murmur3Snapshot[];
}

const recentDigests: DigestTrace[] = [];
let nextDigestSlot = 0;
/** The last list digested per holder (weak: a node's entry goes with it). */
const holderDigests = new WeakMap<UniqueAddress, DigestTrace>();

function computeSeenDigest(seen: readonly UniqueAddress[], holder?: UniqueAddress): number {
  // the recent list sharing the longest beginning (by node object)
  let shared = 0;
  let from: DigestTrace | undefined;
  const own = holder === undefined ? undefined : holderDigests.get(holder);
  for (let t = -1; t < recentDigests.length; t++) {
    const trace = t < 0 ? own : recentDigests[t];
    if (trace === undefined) continue;
    const n = Math.min(trace.seen.length, seen.length);
    let p = 0;
    while (p < n && trace.seen[p] === seen[p]) p++;
    if (p > shared) {
      shared = p;
      from = trace;
    }
  }
  const c = Math.min(
    Math.floor(shared / DIGEST_CHECKPOINT_NODES),
    from === undefined ? 0 : from.checkpoints.length - 1,
  );
  const start = from?.checkpoints[c];
  const stream = start === undefined ? new Murmur3Stream() : Murmur3Stream.from(start);
  const checkpoints = start === undefined ? [] : (from as DigestTrace).checkpoints.slice(0, c);
  for (let i = start === undefined ? 0 : c * DIGEST_CHECKPOINT_NODES; i < seen.length; i++) {
    if (i % DIGEST_CHECKPOINT_NODES === 0) checkpoints.push(stream.snapshot());
    const text = uniqueAddressToString(seen[i] as UniqueAddress);
    if ((i > 0 && !stream.feedAscii("\n")) || !stream.feedAscii(text))
      // a node string that is not ASCII: the whole text, encoded (not kept as a trace)
      return murmur3OfJoined(
        seen.length,
        (j) => uniqueAddressToString(seen[j] as UniqueAddress),
        "\n",
      );
  }
  const trace = { seen, checkpoints };
  recentDigests[nextDigestSlot] = trace;
  nextDigestSlot = (nextDigestSlot + 1) % DIGEST_RECENT_LISTS;
  if (holder !== undefined) holderDigests.set(holder, trace);
  return stream.finish();
}

/**
 * The status the self node sends: the digest, and with `withSeen` the seen set itself
 * (a seen status, see the module comment).
 */
export function gossipStatusOf(
  state: MembershipState,
  withSeen = false,
  hashed = false,
): GossipStatus {
  const g = state.latestGossip;
  const status = {
    from: state.selfUniqueAddress,
    version: g.version,
    seenDigest: seenDigestOf(g, state.selfUniqueAddress),
  };
  const h = hashed ? { ...status, versionHash: versionHashOf(g.version) } : status;
  return withSeen ? { ...h, seen: seenBitsOf(g) } : h;
}

/** What to answer to a received status digest. */
export type GossipStatusReply =
  | { readonly type: "ignored"; readonly reason: "unknown-sender" | "sender-unreachable" }
  /**
   * Ours is newer or concurrent: send the full gossip; `compact`: without the member
   * list (the sender's member list hashes like ours).
   */
  | { readonly type: "send-gossip"; readonly to: UniqueAddress; readonly compact: boolean }
  /**
   * Theirs is newer (request it by sending our own status back), or a hashed status of
   * another version (our full status lets the sender compare). `compact`: as a compact
   * status (see "Compact status").
   */
  | { readonly type: "send-status"; readonly to: UniqueAddress; readonly compact: boolean }
  /**
   * Same version, our seen set has marks theirs lacks: send a seen status. `state` is
   * the view after merging a seen set the status carried (undefined: unchanged).
   * `compact`: as a compact status.
   */
  | {
      readonly type: "send-seen";
      readonly to: UniqueAddress;
      readonly state: MembershipState | undefined;
      readonly compact: boolean;
    }
  /**
   * Same version, nothing to send back. `state` is the view after merging the seen set
   * the status carried (undefined: unchanged, or the seen sets are equal).
   */
  | { readonly type: "none"; readonly state?: MembershipState | undefined };

/** Decides the answer to a status digest (see the module comment). */
export function receiveGossipStatus(
  state: MembershipState,
  status: GossipStatus,
): GossipStatusReply {
  const local = state.latestGossip;
  if (!hasMember(local, status.from)) return { type: "ignored", reason: "unknown-sender" };
  if (!isReachableBy(local.overview.reachability, state.selfUniqueAddress, status.from))
    return { type: "ignored", reason: "sender-unreachable" };
  const compact = compactStatusFor(status, local);
  if (status.versionHash !== undefined) {
    const ours = versionHashOf(local.version);
    return status.versionHash[0] === ours[0] && status.versionHash[1] === ours[1]
      ? receiveSameVersionStatus(state, status, compact)
      : { type: "send-status", to: status.from, compact };
  }
  switch (compareClocks(status.version, local.version)) {
    case ClockOrdering.Same:
      return receiveSameVersionStatus(state, status, compact);
    case ClockOrdering.After:
      return { type: "send-status", to: status.from, compact };
    case ClockOrdering.Before:
    case ClockOrdering.Concurrent:
      return {
        type: "send-gossip",
        to: status.from,
        compact:
          status.membersHash !== undefined &&
          sameHash(status.membersHash, membersHashOf(local.members)),
      };
  }
}

/**
 * Whether our status in reply to `status` may be compact (see "Compact status"): the
 * sender is of a version that reads compact statuses (it sent a hash), and either its
 * member list hashes like ours, or it sent a hashed status (which carries no list hash;
 * it holds the version it hashed, usually over the same members, and if not, it answers
 * the unreadable status with its full one).
 */
function compactStatusFor(status: GossipStatus, local: Gossip): boolean {
  if (status.membersHash !== undefined)
    return sameHash(status.membersHash, membersHashOf(local.members));
  return status.versionHash !== undefined;
}

/** A status of our own version: merge its seen set if it carries one, share ours. */
function receiveSameVersionStatus(
  state: MembershipState,
  status: GossipStatus,
  compact: boolean,
): GossipStatusReply {
  const local = state.latestGossip;
  const theirs = status.seen;
  if (theirs === undefined || !isSeenBitsOf(local, theirs))
    return status.seenDigest === seenDigestOf(local, state.selfUniqueAddress)
      ? { type: "none" }
      : { type: "send-seen", to: status.from, state: undefined, compact };
  const merged = withSeenBits(local, theirs);
  const next = merged === local ? undefined : Object.freeze({ ...state, latestGossip: merged });
  return seenBitsExceed(seenBitsOf(merged), theirs)
    ? { type: "send-seen", to: status.from, state: next, compact }
    : { type: "none", state: next };
}
