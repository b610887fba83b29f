/**
 * Gossip on the wire. The pure Gossip value (core/membership) becomes a compact plain
 * structure that the msgpackr serializer encodes; decoding validates every field and
 * rebuilds the value through the core constructors (which assert the invariants), so a
 * malformed or hostile gossip becomes a typed `InvalidGossipError`, never a crash and
 * never a half-built state.
 *
 * Compact form (docs/cluster-scale.md, "Gossip size"): every node is written once, in a
 * node table (`n`; members first, in member order, then the other nodes the gossip names:
 * tombstones, reachability subjects that are no members); the rest refers to nodes by
 * their index in it; the vector clock names a member's entry by its index. Node strings
 * share the `protocol://system@` prefix of one cluster, written once (`p`).
 *
 * Messages carry the content (everything but the seen set) as its own encoded bytes, and
 * the seen set beside it as a bitmap over the members (membership-messages.ts). The seen
 * set is what changes most often: while a version spreads, every node marks it, and the
 * content stays the same. So one content is encoded once for all targets and seen sets
 * (`encodeGossip`), and a receiver decodes content it decoded a moment ago only once
 * (`decodeGossip` keeps the last GOSSIP_DECODE_CACHE_ENTRIES contents). Decoded nodes and
 * members are interned (`GossipInterner`, gossip-interner.ts), so unchanged members of
 * successive gossips are the same objects, which is what lets the machine see by
 * identity that nothing changed.
 */
import { BytePool, sameBytes } from "../../base/bytes.js";
import { ShardkitError } from "../../base/errors.js";
import { murmur3_32 } from "../../base/hash.js";
import {
  clockKeyOf,
  type Gossip,
  gossipOf,
  gossipOnMembersOf,
  isSeenBitsOf,
  seenBitsOf,
  type Tombstone,
  withSeenBits,
} from "../../core/membership/gossip.js";
import type { Member } from "../../core/membership/member.js";
import { isMemberStatus } from "../../core/membership/member-status.js";
import {
  type ObserverVersion,
  type ReachabilityRecord,
  ReachabilityStatus,
  reachabilityOf,
} from "../../core/membership/reachability.js";
import { type UniqueAddress, uniqueAddressToString } from "../../core/membership/unique-address.js";
import { vectorClockOf } from "../../core/membership/vector-clock.js";
import { createMsgpackSerializer } from "../../protocol/msgpack-serializer.js";
import {
  type GossipContentParts,
  readGossipContent,
  writeGossipContent,
} from "./gossip-content-wire.js";
import { BoundedMap, GossipInterner } from "./gossip-interner.js";
import { NOT_CANONICAL } from "./gossip-message-wire.js";

export { GOSSIP_INTERN_ENTRIES_MAX, GossipInterner } from "./gossip-interner.js";

export class InvalidGossipError extends ShardkitError {
  constructor(detail: string) {
    super("INVALID_GOSSIP", `invalid gossip: ${detail}`, { detail });
  }
}

type WireMember = [
  status: string,
  roles: string[],
  appVersion: string,
  dc: string,
  upNumber: number,
];

/** The compact wire form of a gossip without its seen set (see the module comment). */
export interface WireGossip {
  /** Prefix shared by every node string of the table ("" when they share none). */
  readonly p: string;
  /** Node table: members first (in member order), then other nodes; without `p`. */
  readonly n: string[];
  /** Member i is node n[i]. */
  readonly m: WireMember[];
  readonly r: [observer: number, subject: number, status: string, version: number][];
  readonly rv: [observer: number, version: number][];
  /** Clock entries: a node's own entry by its table index, any other key as a string. */
  readonly v: [key: number | string, counter: number][];
  readonly t: [node: number, removedAtMs: number][];
}

/**
 * Decoded gossips kept by content (per process). A gossip broadcast reaches every member
 * with the same bytes, and in the simulator all members share this process; a few
 * dozen recent gossips cover one gossip round. Each entry holds its bytes (O(N)).
 */
export const GOSSIP_DECODE_CACHE_ENTRIES = 32;

/** The process-wide interner of the codec. */
const interner = new GossipInterner();

/** The interned node of a canonical unique-address string (the one gossip decodes to). */
export function internNode(text: string): UniqueAddress {
  return interner.node(text);
}

function addressPrefixOf(u: UniqueAddress): string {
  return `${u.address.protocol}://${u.address.system}@`;
}

export function gossipToWire(g: Gossip): WireGossip {
  return wireOf(g, false);
}

/**
 * The compact wire form (gossip-logic.ts, "Compact gossip"): the wire form without the
 * member list. `n` holds only the nodes after the members, `mc` is the number of members
 * (indices below it name the receiver's members, in member order).
 */
export function gossipToCompactWire(g: Gossip): WireGossip & { readonly mc: number } {
  return { ...wireOf(g, true), mc: g.members.length };
}

/** What the wire form needs of a member list, kept per list (it is shared by many gossips). */
interface MembersTable {
  /** Clock key -> member index. */
  readonly index: ReadonlyMap<string, number>;
  /** The prefix every member's node string shares ("" when they share none). */
  readonly prefix: string;
}

const membersTables = new WeakMap<readonly Member[], MembersTable>();

function membersTableOf(members: readonly Member[]): MembersTable {
  let t = membersTables.get(members);
  if (t === undefined) {
    const index = new Map<string, number>();
    members.forEach((x, i) => {
      index.set(uniqueAddressToString(x.uniqueAddress), i);
    });
    const first = members[0];
    let prefix = first === undefined ? "" : addressPrefixOf(first.uniqueAddress);
    if (members.some((x) => addressPrefixOf(x.uniqueAddress) !== prefix)) prefix = "";
    t = { index, prefix };
    membersTables.set(members, t);
  }
  return t;
}

/**
 * The wire form; `compact`: without the member list (`m` empty, `n` only the other
 * nodes). Either way the node table is the members in member order, then the other
 * nodes in order of first mention, and the prefix is shared by all of them.
 */
function wireOf(g: Gossip, compact: boolean): WireGossip {
  const members = membersTableOf(g.members);
  const memberCount = g.members.length;
  const others = new Map<string, number>();
  const otherNodes: UniqueAddress[] = [];
  const indexOf = (u: UniqueAddress): number => {
    const k = uniqueAddressToString(u);
    let i = members.index.get(k) ?? others.get(k);
    if (i === undefined) {
      i = memberCount + otherNodes.length;
      others.set(k, i);
      otherNodes.push(u);
    }
    return i;
  };
  const r = g.overview.reachability.records.map((x): [number, number, string, number] => [
    indexOf(x.observer),
    indexOf(x.subject),
    x.status,
    x.version,
  ]);
  const rv = g.overview.reachability.versions.map((x): [number, number] => [
    indexOf(x.observer),
    x.version,
  ]);
  const t = g.tombstones.map((x): [number, number] => [indexOf(x.node), x.removedAtMs]);
  // entries by index, not destructured: array destructuring runs the iterator protocol
  const v = g.version.entries.map((e): [number | string, number] => {
    const i = members.index.get(e[0]);
    return [i !== undefined ? i : e[0], e[1]];
  });
  let p = memberCount > 0 ? members.prefix : "";
  if (memberCount === 0 && otherNodes[0] !== undefined) p = addressPrefixOf(otherNodes[0]);
  if (p !== "" && otherNodes.some((u) => addressPrefixOf(u) !== p)) p = "";
  const strip = (u: UniqueAddress) => uniqueAddressToString(u).slice(p.length);
  const n = compact
    ? otherNodes.map(strip)
    : [...g.members.map((x) => strip(x.uniqueAddress)), ...otherNodes.map(strip)];
  const m: WireMember[] = compact
    ? []
    : g.members.map((x) => [x.status, [...x.roles], x.appVersion, x.dataCenter, x.upNumber]);
  return { p, n, m, r, rv, v, t };
}

/**
 * The gossip of a wire form; a compact one (`mc`) takes the member list of `local` (the
 * caller checked that it is the list the sender meant: the members hash), shared as is.
 */
export function gossipFromWire(data: unknown, local?: Gossip): Gossip {
  try {
    const w = asRecord(data, "gossip");
    const prefix = asString(w.p, "p");
    const compact = w.mc !== undefined;
    const localMembers = local?.members;
    if (compact && (localMembers === undefined || asInt(w.mc, "mc") !== localMembers.length))
      throw new InvalidGossipError("a compact gossip needs the member list it was made against");
    const extra = asArray(w.n, "n").map((x) => interner.node(prefix + asString(x, "node")));
    const table =
      compact && localMembers !== undefined
        ? [...localMembers.map((m) => m.uniqueAddress), ...extra]
        : extra;
    const nodeAt = (i: unknown, what: string): UniqueAddress => {
      const k = asInt(i, what);
      const node = table[k];
      if (node === undefined) throw new InvalidGossipError(`${what} ${k} is not in the node table`);
      return node;
    };
    const wireMembers = asArray(w.m, "m");
    if (wireMembers.length > table.length)
      throw new InvalidGossipError("more members than nodes in the node table");
    const members =
      compact && localMembers !== undefined
        ? localMembers
        : wireMembers.map((x, i) => memberFromWire(x, table[i] as UniqueAddress));
    const records = asArray(w.r, "r").map((x): ReachabilityRecord => {
      const [o, sub, status, version] = asTuple(x, 4, "reachability record");
      const st = asString(status, "reachability status");
      if (!REACHABILITY_STATUSES.has(st))
        throw new InvalidGossipError(`unknown reachability status ${st}`);
      return interner.row(
        nodeAt(o, "observer"),
        nodeAt(sub, "subject"),
        st as ReachabilityRecord["status"],
        asInt(version, "reachability version"),
      );
    });
    const versions = asArray(w.rv, "rv").map((x): ObserverVersion => {
      const [o, v] = asTuple(x, 2, "rv");
      return interner.observerVersion(nodeAt(o, "rv observer"), asInt(v, "rv version"));
    });
    // interned frozen entries in a frozen array: vectorClockOf keeps them as they are
    // when they come in clock order (as a clock is sent)
    const clock = Object.freeze(
      asArray(w.v, "v").map((x) => {
        const [k, c] = asTuple(x, 2, "v");
        const keyOf =
          typeof k === "number" && k < members.length
            ? clockKeyOf(nodeAt(k, "clock key"))
            : asString(k, "clock key");
        const counter = asInt(c, "clock counter");
        // a counter that is no valid clock counter is vectorClockOf's to refuse
        return counter > 0 ? interner.clockEntry(keyOf, counter) : ([keyOf, counter] as const);
      }),
    );
    const tombstones = asArray(w.t, "t").map((x): Tombstone => {
      const [n, at] = asTuple(x, 2, "t");
      return { node: nodeAt(n, "tombstone"), removedAtMs: asNumber(at, "removedAtMs") };
    });
    return gossipOfParts(
      { members: compact ? undefined : members, records, versions, clock, tombstones },
      local,
    );
  } catch (e) {
    if (e instanceof InvalidGossipError) throw e;
    throw new InvalidGossipError(e instanceof Error ? e.message : String(e));
  }
}

/**
 * The gossip of decoded parts, checked by the core constructors (which throw on a broken
 * invariant); a compact content (no members) goes on the member list of `local`.
 */
function gossipOfParts(parts: GossipContentParts, local: Gossip | undefined): Gossip {
  const fields = {
    reachability: reachabilityOf(parts.records, parts.versions),
    version: vectorClockOf(parts.clock),
    tombstones: parts.tombstones,
  };
  if (parts.members !== undefined) return gossipOf({ members: parts.members, ...fields });
  if (local === undefined)
    throw new InvalidGossipError("a compact gossip needs the member list it was made against");
  return gossipOnMembersOf(local, fields);
}

function memberFromWire(x: unknown, node: UniqueAddress): Member {
  const [status, roles, appVersion, dc, upNumber] = asTuple(x, 5, "member");
  const s = asString(status, "member status");
  if (!isMemberStatus(s))
    throw new InvalidGossipError(`unknown member status ${JSON.stringify(s)}`);
  return interner.member(
    node,
    s,
    asArray(roles, "roles").map((r) => asString(r, "role")),
    asString(appVersion, "appVersion"),
    asString(dc, "dataCenter"),
    asInt(upNumber, "upNumber"),
  );
}

const REACHABILITY_STATUSES = new Set<string>(Object.values(ReachabilityStatus));

// ------------------------------------------------------------------ gossip as bytes

/** A gossip on the wire: its content (without the seen set) as bytes, and the seen set. */
export interface EncodedGossip {
  /** The compact form (WireGossip) encoded; the same bytes for every seen set. */
  readonly content: Uint8Array;
  /**
   * The seen set over the members: bit (i mod 7) of element floor(i / 7) is member i;
   * every element is in [0, 127].
   */
  readonly seen: readonly number[];
}

/**
 * The content's own MessagePack serializer: the content is plain data, so its bytes do
 * not depend on a node's serializer registry, and every node (every simulated node of
 * one process too) can share an encoding.
 */
const contentSerializer = createMsgpackSerializer();

/** The last content encoding per member list (gossips differing only in seen share it). */
const encodedContent = new WeakMap<
  readonly Member[],
  { readonly gossip: Gossip; readonly bytes: Uint8Array }
>();

function sameContent(a: Gossip, b: Gossip): boolean {
  return (
    a.members === b.members &&
    a.version === b.version &&
    a.overview.reachability === b.overview.reachability &&
    a.tombstones === b.tombstones
  );
}

/**
 * The gossip for the wire. The content is encoded once per content (members, version,
 * reachability and tombstones, by identity; gossip.ts shares them between gossips that
 * differ only in their seen sets), whatever the number of targets and seen marks.
 */
export function encodeGossip(g: Gossip, compact = false): EncodedGossip {
  const cache = compact ? encodedCompactContent : encodedContent;
  const hit = cache.get(g.members);
  let content: Uint8Array;
  if (hit !== undefined && sameContent(hit.gossip, g)) content = hit.bytes;
  else {
    content =
      writeGossipContent(g, compact) ??
      contentSerializer.toBinary(compact ? gossipToCompactWire(g) : gossipToWire(g));
    cache.set(g.members, { gossip: g, bytes: content });
  }
  return { content, seen: seenBitsOf(g) };
}

/** The last compact content encoding per member list (see encodedContent). */
const encodedCompactContent = new WeakMap<
  readonly Member[],
  { readonly gossip: Gossip; readonly bytes: Uint8Array }
>();

interface DecodedEntry {
  readonly bytes: Uint8Array;
  readonly gossip: Gossip;
  /** The receiver's member list a compact content was decoded with (undefined: whole). */
  readonly members: readonly Member[] | undefined;
}

/** Recently decoded contents by murmur3 of their bytes (see GOSSIP_DECODE_CACHE_ENTRIES). */
const decoded = new BoundedMap<number, DecodedEntry>(GOSSIP_DECODE_CACHE_ENTRIES);
/** The copies of the bytes of `decoded` (a bounded FIFO: they pin a chunk or two). */
const decodedBytes = new BytePool();

/**
 * The gossip of `content` and `seen` (InvalidGossipError when malformed). The content
 * of recent bytes is decoded once (GOSSIP_DECODE_CACHE_ENTRIES); the seen set is applied
 * to it each time.
 */
export function decodeGossip(content: Uint8Array, seen: unknown, local?: Gossip): Gossip {
  const g = decodeGossipContent(content, local);
  const bits = asArray(seen, "seen");
  if (!isSeenBitsOf(g, bits as number[]))
    throw new InvalidGossipError("seen is not a bitmap over the members");
  // the decoded content has an empty seen set: the union is the sent set
  return withSeenBits(g, bits as number[]);
}

/**
 * The gossip of `content` with an empty seen set (InvalidGossipError when malformed);
 * recent contents are decoded once (GOSSIP_DECODE_CACHE_ENTRIES).
 */
export function decodeGossipContent(content: Uint8Array, local?: Gossip): Gossip {
  const localMembers = local?.members;
  const h = murmur3_32(content);
  const hit = decoded.get(h);
  if (hit !== undefined && hit.members === localMembers && sameBytes(hit.bytes, content))
    return hit.gossip;
  let g: Gossip;
  // the layout this process writes is read in one pass; anything else, and whatever
  // that reader leaves, by msgpackr and gossipFromWire (gossip-content-wire.ts)
  const parts = readGossipContent(content, localMembers, interner);
  if (parts !== NOT_CANONICAL) {
    try {
      g = gossipOfParts(parts, local);
    } catch (e) {
      if (e instanceof InvalidGossipError) throw e;
      throw new InvalidGossipError(e instanceof Error ? e.message : String(e));
    }
  } else {
    let body: unknown;
    try {
      body = contentSerializer.fromBinary(content);
    } catch (e) {
      throw new InvalidGossipError(`undecodable content: ${e instanceof Error ? e.message : e}`);
    }
    g = gossipFromWire(body, local);
  }
  // a copy: `content` is a view into a received batch, which must not be kept alive
  decoded.set(h, { bytes: decodedBytes.copy(content), gossip: g, members: localMembers });
  return g;
}

/** Empties the per-process cache of decoded gossip (tests). */
export function clearGossipCodecCaches(): void {
  decoded.clear();
}

// ------------------------------------------------------------------ validation

function asRecord(v: unknown, what: string): Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw new InvalidGossipError(`${what} is not an object`);
  return v as Record<string, unknown>;
}
function asArray(v: unknown, what: string): unknown[] {
  if (!Array.isArray(v)) throw new InvalidGossipError(`${what} is not an array`);
  return v;
}
function asTuple(v: unknown, n: number, what: string): unknown[] {
  const a = asArray(v, what);
  if (a.length !== n) throw new InvalidGossipError(`${what} must have ${n} fields`);
  return a;
}
function asString(v: unknown, what: string): string {
  if (typeof v !== "string") throw new InvalidGossipError(`${what} is not a string`);
  return v;
}
function asNumber(v: unknown, what: string): number {
  if (typeof v !== "number" || !Number.isFinite(v))
    throw new InvalidGossipError(`${what} is not a number`);
  return v;
}
function asInt(v: unknown, what: string): number {
  if (!Number.isSafeInteger(v)) throw new InvalidGossipError(`${what} is not an integer`);
  return v as number;
}
