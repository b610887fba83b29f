/**
 * A gossip's content written and read in one pass, without the plain wire structure.
 *
 * The content of a gossip (gossip-codec.ts) is the MessagePack map of its compact wire
 * form `{p, n, m, r, rv, v, t, mc?}` (WireGossip). Built as plain tuples and then packed,
 * or unpacked and then walked, each content cost two walks over thousands of small
 * arrays; at 1 000 members, while a crash's observations spread, every member encodes and
 * decodes a new content of hundreds of reachability rows several times a second
 * (docs/cluster-scale.md, "Session 19").
 *
 * - `writeGossipContent` writes the map straight from the gossip: exactly the bytes
 *   msgpackr writes for `gossipToWire`/`gossipToCompactWire` of it (numbers and strings
 *   through the fast packer's own writers; test/cluster/gossip-content-wire.test.ts
 *   compares both on random gossips). A list too long for a 16-bit array header is left
 *   to the general path (undefined).
 * - `readGossipContent` reads a content of exactly that layout into its parts (nodes and
 *   rows interned as the general decoder does) and returns NOT_CANONICAL for anything
 *   else: another key order, a number or string form msgpackr does not write, a non-ASCII
 *   string, an index outside the node table, an unknown status, trailing bytes, or any
 *   error on the way. The caller then decodes the content through msgpackr and
 *   gossipFromWire, which decide what is malformed and report it, so both paths accept
 *   the same contents and build the same gossip.
 */
import { BytePool } from "../../base/bytes.js";
import type { Gossip, Tombstone } from "../../core/membership/gossip.js";
import { clockKeyOf } from "../../core/membership/gossip.js";
import type { Member } from "../../core/membership/member.js";
import { isMemberStatus, type MemberStatus } from "../../core/membership/member-status.js";
import {
  type ObserverVersion,
  type ReachabilityRecord,
  ReachabilityStatus,
} from "../../core/membership/reachability.js";
import { type UniqueAddress, uniqueAddressToString } from "../../core/membership/unique-address.js";
import type { VectorClockEntry } from "../../core/membership/vector-clock.js";
import { packNumber, packString } from "../../protocol/msgpack-fast-pack.js";
import type { GossipInterner } from "./gossip-interner.js";
import { NOT_CANONICAL } from "./gossip-message-wire.js";

// ------------------------------------------------------------------ writing

/** Bytes of the writer's first scratch buffer; it doubles when a content needs more. */
const SCRATCH_START_BYTES = 65_536;
/** Longest list a 16-bit array header holds (msgpackr writes longer ones as array32). */
const ARRAY16_MAX = 0xffff;

let scratch = new Uint8Array(SCRATCH_START_BYTES);
let scratchView = new DataView(scratch.buffer);
let at = 0;

function room(bytes: number): void {
  if (at + bytes <= scratch.length) return;
  let size = scratch.length * 2;
  while (size < at + bytes) size *= 2;
  const next = new Uint8Array(size);
  next.set(scratch.subarray(0, at));
  scratch = next;
  scratchView = new DataView(next.buffer);
}

function writeNumber(v: number): void {
  room(9);
  at = packNumber(scratch, scratchView, v, at);
}

function writeString(s: string): void {
  room(5 + s.length * 3);
  // room was made for the longest form: packString cannot run out of it
  at = packString(scratch, scratchView, undefined, s, at);
}

/** A fixstr key (all keys of the map are ASCII and shorter than 32 bytes). */
function writeKey(k: string): void {
  room(1 + k.length);
  scratch[at++] = 0xa0 | k.length;
  for (let i = 0; i < k.length; i++) scratch[at++] = k.charCodeAt(i);
}

/** An array header as msgpackr writes it (the caller checked n <= ARRAY16_MAX). */
function writeArrayHeader(n: number): void {
  room(3);
  if (n < 0x10) scratch[at++] = 0x90 | n;
  else {
    scratch[at] = 0xdc;
    scratch[at + 1] = n >>> 8;
    scratch[at + 2] = n & 0xff;
    at += 3;
  }
}

/** What writing needs of a member list, kept per list (many gossips share one). */
interface MemberIndex {
  /** Member node (by identity) -> member index. */
  readonly byNode: Map<UniqueAddress, number>;
  /** Clock key (the canonical node string) -> member index. */
  readonly byKey: Map<string, number>;
  /** The prefix every member's node string shares ("" when they share none). */
  readonly prefix: string;
}

const memberIndexes = new WeakMap<readonly Member[], MemberIndex>();

function addressPrefixOf(u: UniqueAddress): string {
  return `${u.address.protocol}://${u.address.system}@`;
}

function memberIndexOf(members: readonly Member[]): MemberIndex {
  let t = memberIndexes.get(members);
  if (t === undefined) {
    const byNode = new Map<UniqueAddress, number>();
    const byKey = new Map<string, number>();
    const first = members[0];
    let prefix = first === undefined ? "" : addressPrefixOf(first.uniqueAddress);
    for (let i = 0; i < members.length; i++) {
      const u = (members[i] as Member).uniqueAddress;
      byNode.set(u, i);
      byKey.set(uniqueAddressToString(u), i);
      if (prefix !== "" && addressPrefixOf(u) !== prefix) prefix = "";
    }
    t = { byNode, byKey, prefix };
    memberIndexes.set(members, t);
  }
  return t;
}

/**
 * The contents written are carved from shared chunks: each lives while messages carrying
 * it are on their way and its sender keeps it for the next target (gossip-codec.ts), a
 * short while; an array of its own each was a buffer outside the JS heap per content.
 */
const contents = new BytePool();

/** A copy of what the scratch buffer holds. */
function written(): Uint8Array {
  return contents.copy(scratch.subarray(0, at));
}

/** The nodes after the members, in order of first mention (see writeGossipContent). */
interface OtherNodes {
  /** Canonical node string -> table index. */
  readonly index: ReadonlyMap<string, number>;
  readonly nodes: readonly UniqueAddress[];
}

const NO_OTHER_NODES: OtherNodes = { index: new Map(), nodes: [] };

/** The table index of `u`, or -1 when it is neither a member nor one of `others`. */
function tableIndexOf(members: MemberIndex, others: OtherNodes, u: UniqueAddress): number {
  const i = members.byNode.get(u);
  if (i !== undefined) return i;
  const k = uniqueAddressToString(u);
  return members.byKey.get(k) ?? others.index.get(k) ?? -1;
}

/** The nodes `g` names that are no members, in order of first mention (as wireOf). */
function otherNodesOf(g: Gossip, members: MemberIndex): OtherNodes {
  const index = new Map<string, number>();
  const nodes: UniqueAddress[] = [];
  const memberCount = g.members.length;
  const add = (u: UniqueAddress): void => {
    if (members.byNode.has(u)) return;
    const k = uniqueAddressToString(u);
    if (members.byKey.has(k) || index.has(k)) return;
    index.set(k, memberCount + nodes.length);
    nodes.push(u);
  };
  const records = g.overview.reachability.records;
  for (let i = 0; i < records.length; i++) {
    const r = records[i] as ReachabilityRecord;
    add(r.observer);
    add(r.subject);
  }
  const versions = g.overview.reachability.versions;
  for (let i = 0; i < versions.length; i++) add((versions[i] as ObserverVersion).observer);
  for (let i = 0; i < g.tombstones.length; i++) add((g.tombstones[i] as Tombstone).node);
  return { index, nodes };
}

/** The bytes of the statuses a reachability row can have, as msgpackr writes the strings. */
const STATUS_BYTES: ReadonlyMap<string, Uint8Array> = new Map(
  Object.values(ReachabilityStatus).map((st) => [
    st,
    Uint8Array.of(0xa0 | st.length, ...[...st].map((c) => c.charCodeAt(0))),
  ]),
);
/** Most bytes of one row: fixarray, two table indices (< 2^16), a status, a version. */
const ROW_BYTES_MAX = 1 + 3 + 3 + 12 + 9;
/** Most bytes of an observer version or a tombstone: fixarray, index, number. */
const PAIR_BYTES_MAX = 1 + 3 + 9;

/**
 * The content bytes of `g` (a copy of its own), exactly as msgpackr packs gossipToWire(g), or
 * with `compact` gossipToCompactWire(g); undefined when a list is too long for this
 * writer (the caller packs the wire form instead).
 *
 * The node table (members, then the other nodes the rows, observer versions and
 * tombstones name) comes first in the content and decides its prefix, so it is written
 * first as if every node named were a member, the usual case; when one is not, the
 * other nodes are collected and the content written again.
 */
export function writeGossipContent(g: Gossip, compact: boolean): Uint8Array | undefined {
  const members = g.members;
  if (
    members.length > ARRAY16_MAX ||
    g.overview.reachability.records.length > ARRAY16_MAX ||
    g.overview.reachability.versions.length > ARRAY16_MAX ||
    g.version.entries.length > ARRAY16_MAX ||
    g.tombstones.length > ARRAY16_MAX
  )
    return undefined;
  const index = memberIndexOf(members);
  if (writeContent(g, compact, index, NO_OTHER_NODES)) return written();
  const others = otherNodesOf(g, index);
  if ((compact ? 0 : members.length) + others.nodes.length > ARRAY16_MAX) return undefined;
  return writeContent(g, compact, index, others) ? written() : undefined;
}

/**
 * Writes the content into the scratch buffer; false when it names a node that is neither
 * a member nor one of `others` (or a member's roles do not fit an array16).
 */
function writeContent(
  g: Gossip,
  compact: boolean,
  index: MemberIndex,
  others: OtherNodes,
): boolean {
  const members = g.members;
  const memberCount = members.length;
  const otherList = others.nodes;
  let p = memberCount > 0 ? index.prefix : "";
  if (memberCount === 0 && otherList[0] !== undefined) p = addressPrefixOf(otherList[0]);
  if (p !== "")
    for (let i = 0; i < otherList.length; i++)
      if (addressPrefixOf(otherList[i] as UniqueAddress) !== p) {
        p = "";
        break;
      }
  at = 0;
  room(3);
  scratch[at++] = 0xde; // map16, as msgpackr writes every object
  scratch[at++] = 0;
  scratch[at++] = compact ? 8 : 7;
  writeKey("p");
  writeString(p);
  writeKey("n");
  writeArrayHeader(compact ? otherList.length : memberCount + otherList.length);
  if (!compact)
    for (let i = 0; i < memberCount; i++)
      writeString(uniqueAddressToString((members[i] as Member).uniqueAddress).slice(p.length));
  for (let i = 0; i < otherList.length; i++)
    writeString(uniqueAddressToString(otherList[i] as UniqueAddress).slice(p.length));
  writeKey("m");
  if (compact) writeArrayHeader(0);
  else {
    writeArrayHeader(memberCount);
    for (let i = 0; i < memberCount; i++) {
      const m = members[i] as Member;
      const roles = m.roles;
      if (roles.length > ARRAY16_MAX) return false;
      room(1);
      scratch[at++] = 0x95;
      writeString(m.status);
      writeArrayHeader(roles.length);
      for (let j = 0; j < roles.length; j++) writeString(roles[j] as string);
      writeString(m.appVersion);
      writeString(m.dataCenter);
      writeNumber(m.upNumber);
    }
  }
  const records = g.overview.reachability.records;
  writeKey("r");
  writeArrayHeader(records.length);
  room(records.length * ROW_BYTES_MAX);
  const b = scratch;
  const view = scratchView;
  for (let i = 0; i < records.length; i++) {
    const r = records[i] as ReachabilityRecord;
    const o = tableIndexOf(index, others, r.observer);
    const sub = tableIndexOf(index, others, r.subject);
    const status = STATUS_BYTES.get(r.status);
    if (o < 0 || sub < 0 || status === undefined) return false;
    b[at++] = 0x94;
    at = packNumber(b, view, o, at);
    at = packNumber(b, view, sub, at);
    b.set(status, at);
    at += status.length;
    at = packNumber(b, view, r.version, at);
  }
  const versions = g.overview.reachability.versions;
  writeKey("rv");
  writeArrayHeader(versions.length);
  room(versions.length * PAIR_BYTES_MAX);
  for (let i = 0; i < versions.length; i++) {
    const v = versions[i] as ObserverVersion;
    const o = tableIndexOf(index, others, v.observer);
    if (o < 0) return false;
    scratch[at++] = 0x92;
    at = packNumber(scratch, scratchView, o, at);
    at = packNumber(scratch, scratchView, v.version, at);
  }
  const entries = g.version.entries;
  writeKey("v");
  writeArrayHeader(entries.length);
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i] as VectorClockEntry;
    const k = index.byKey.get(e[0]);
    if (k !== undefined) {
      room(PAIR_BYTES_MAX);
      scratch[at++] = 0x92;
      at = packNumber(scratch, scratchView, k, at);
    } else {
      room(1);
      scratch[at++] = 0x92;
      writeString(e[0]);
    }
    writeNumber(e[1]);
  }
  const tombstones = g.tombstones;
  writeKey("t");
  writeArrayHeader(tombstones.length);
  room(tombstones.length * PAIR_BYTES_MAX);
  for (let i = 0; i < tombstones.length; i++) {
    const t = tombstones[i] as Tombstone;
    const n = tableIndexOf(index, others, t.node);
    if (n < 0) return false;
    scratch[at++] = 0x92;
    at = packNumber(scratch, scratchView, n, at);
    at = packNumber(scratch, scratchView, t.removedAtMs, at);
  }
  if (compact) {
    writeKey("mc");
    writeNumber(memberCount);
  }
  return true;
}

// ------------------------------------------------------------------ reading

/** A content read by readGossipContent, before the core constructors check it. */
export interface GossipContentParts {
  /** The members of a whole content; undefined for a compact one (the receiver's list). */
  readonly members: readonly Member[] | undefined;
  readonly records: readonly ReachabilityRecord[];
  readonly versions: readonly ObserverVersion[];
  /** Frozen, in the order sent. */
  readonly clock: readonly (readonly [string, number])[];
  readonly tombstones: readonly Tombstone[];
}

/** Thrown inside the reader for any layout it leaves to the general decoder. */
class NotCanonical {}
const NOT_MINE = new NotCanonical();

const NO_BYTES = new Uint8Array(0);
/** The content being read, and the read position in it. */
let bytes: Uint8Array = NO_BYTES;
let pos = 0;

/** A non-negative integer in a form msgpackr writes (fixint, uint8/16/32). */
function readUint(): number {
  const b = bytes;
  const t = b[pos];
  if (t === undefined) throw NOT_MINE;
  if (t < 0x80) {
    pos += 1;
    return t;
  }
  if (t === 0xcc && pos + 2 <= b.length) {
    pos += 2;
    return b[pos - 1] as number;
  }
  if (t === 0xcd && pos + 3 <= b.length) {
    pos += 3;
    return ((b[pos - 2] as number) << 8) | (b[pos - 1] as number);
  }
  if (t === 0xce && pos + 5 <= b.length) {
    const v =
      (b[pos + 1] as number) * 0x1000000 +
      (((b[pos + 2] as number) << 16) | ((b[pos + 3] as number) << 8) | (b[pos + 4] as number));
    pos += 5;
    return v;
  }
  throw NOT_MINE;
}

/** Any finite number in a form msgpackr writes (the integers above, negatives, float64). */
function readNumber(): number {
  const t = bytes[pos];
  if (t === undefined) throw NOT_MINE;
  if (t < 0x80 || (t >= 0xcc && t <= 0xce)) return readUint();
  if (t >= 0xe0) {
    pos += 1;
    return t - 0x100;
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let v: number;
  if (t === 0xd0 && pos + 2 <= bytes.length) v = view.getInt8(pos + 1);
  else if (t === 0xd1 && pos + 3 <= bytes.length) v = view.getInt16(pos + 1);
  else if (t === 0xd2 && pos + 5 <= bytes.length) v = view.getInt32(pos + 1);
  else if (t === 0xcb && pos + 9 <= bytes.length) v = view.getFloat64(pos + 1);
  else throw NOT_MINE;
  pos += t === 0xd0 ? 2 : t === 0xd1 ? 3 : t === 0xd2 ? 5 : 9;
  if (!Number.isFinite(v)) throw NOT_MINE;
  return v;
}

function readArrayHeader(): number {
  const t = bytes[pos];
  if (t === undefined) throw NOT_MINE;
  if ((t & 0xf0) === 0x90) {
    pos += 1;
    return t & 0x0f;
  }
  if (t === 0xdc && pos + 3 <= bytes.length) {
    pos += 3;
    return ((bytes[pos - 2] as number) << 8) | (bytes[pos - 1] as number);
  }
  throw NOT_MINE;
}

/** The byte length of the string at pos (moving pos past its header). */
function readStringHeader(): number {
  const t = bytes[pos];
  if (t === undefined) throw NOT_MINE;
  let n: number;
  if ((t & 0xe0) === 0xa0) {
    n = t & 0x1f;
    pos += 1;
  } else if (t === 0xd9 && pos + 2 <= bytes.length) {
    n = bytes[pos + 1] as number;
    pos += 2;
  } else if (t === 0xda && pos + 3 <= bytes.length) {
    n = ((bytes[pos + 1] as number) << 8) | (bytes[pos + 2] as number);
    pos += 3;
  } else throw NOT_MINE;
  if (pos + n > bytes.length) throw NOT_MINE;
  return n;
}

/** Recent ASCII strings by their bytes: statuses, roles, DCs and node names repeat. */
const STRING_CACHE_ENTRIES = 4_096;
const STRING_CACHE_LENGTH_MAX = 64;
const stringCache = new Map<number, string>();

function asciiOf(b: Uint8Array, start: number, end: number): string {
  return String.fromCharCode.apply(null, b.subarray(start, end) as unknown as number[]);
}

/** An ASCII string (anything else is left to the general decoder). */
function readString(): string {
  const n = readStringHeader();
  const b = bytes;
  const start = pos;
  const end = start + n;
  // FNV-1a over the bytes while checking they are ASCII
  let h = 0x811c9dc5 ^ n;
  for (let i = start; i < end; i++) {
    const c = b[i] as number;
    if (c >= 0x80) throw NOT_MINE;
    h = Math.imul(h ^ c, 0x01000193);
  }
  pos = end;
  if (n > STRING_CACHE_LENGTH_MAX) return asciiOf(b, start, end);
  const hit = stringCache.get(h);
  if (hit !== undefined && hit.length === n) {
    let same = true;
    for (let i = 0; i < n; i++)
      if (hit.charCodeAt(i) !== b[start + i]) {
        same = false;
        break;
      }
    if (same) return hit;
  }
  const s = asciiOf(b, start, end);
  if (stringCache.size >= STRING_CACHE_ENTRIES) stringCache.clear();
  stringCache.set(h, s);
  return s;
}

/** The key at pos must be `k` (a fixstr). */
function expectKey(k: string): void {
  if (bytes[pos] !== (0xa0 | k.length) || pos + 1 + k.length > bytes.length) throw NOT_MINE;
  for (let i = 0; i < k.length; i++) if (bytes[pos + 1 + i] !== k.charCodeAt(i)) throw NOT_MINE;
  pos += 1 + k.length;
}

function expectTuple(n: number): void {
  if (bytes[pos] !== (0x90 | n)) throw NOT_MINE;
  pos += 1;
}

const REACHABILITY_STATUSES: ReadonlySet<string> = new Set(Object.values(ReachabilityStatus));

/**
 * The parts of a content written as writeGossipContent writes it, or NOT_CANONICAL (see
 * the module comment); `localMembers`: the receiver's member list, for a compact
 * content. Never throws.
 */
export function readGossipContent(
  content: Uint8Array,
  localMembers: readonly Member[] | undefined,
  interner: GossipInterner,
): GossipContentParts | typeof NOT_CANONICAL {
  bytes = content;
  pos = 0;
  try {
    return readContent(localMembers, interner);
  } catch {
    // NOT_MINE, or an error of the interner or of a member's fields: the general
    // decoder reports it
    return NOT_CANONICAL;
  } finally {
    bytes = NO_BYTES;
  }
}

function readContent(
  localMembers: readonly Member[] | undefined,
  interner: GossipInterner,
): GossipContentParts {
  if (bytes.length < 3 || bytes[0] !== 0xde || bytes[1] !== 0) throw NOT_MINE;
  const keys = bytes[2];
  if (keys !== 7 && keys !== 8) throw NOT_MINE;
  const compact = keys === 8;
  if (compact && localMembers === undefined) throw NOT_MINE;
  pos = 3;
  expectKey("p");
  const prefix = readString();
  expectKey("n");
  const count = readArrayHeader();
  const extra: UniqueAddress[] = [];
  for (let i = 0; i < count; i++) extra.push(interner.node(prefix + readString()));
  const base = compact ? (localMembers as readonly Member[]).length : 0;
  const tableSize = base + extra.length;
  const nodeAt = (i: number): UniqueAddress => {
    if (i < base) return ((localMembers as readonly Member[])[i] as Member).uniqueAddress;
    const node = extra[i - base];
    if (node === undefined) throw NOT_MINE;
    return node;
  };
  expectKey("m");
  const memberCount = readArrayHeader();
  if (memberCount > tableSize || (compact && memberCount !== 0)) throw NOT_MINE;
  let members: Member[] | undefined;
  if (!compact) {
    members = [];
    for (let i = 0; i < memberCount; i++) {
      expectTuple(5);
      const status = readString();
      if (!isMemberStatus(status)) throw NOT_MINE;
      const roleCount = readArrayHeader();
      const roles: string[] = [];
      for (let j = 0; j < roleCount; j++) roles.push(readString());
      const appVersion = readString();
      const dc = readString();
      const upNumber = readNumber();
      if (!Number.isSafeInteger(upNumber)) throw NOT_MINE;
      members.push(
        interner.member(
          extra[i] as UniqueAddress,
          status as MemberStatus,
          roles,
          appVersion,
          dc,
          upNumber,
        ),
      );
    }
  }
  expectKey("r");
  const recordCount = readArrayHeader();
  const records: ReachabilityRecord[] = [];
  for (let i = 0; i < recordCount; i++) {
    expectTuple(4);
    const observer = nodeAt(readUint());
    const subject = nodeAt(readUint());
    const status = readString();
    if (!REACHABILITY_STATUSES.has(status)) throw NOT_MINE;
    const version = readNumber();
    if (!Number.isSafeInteger(version)) throw NOT_MINE;
    records.push(interner.row(observer, subject, status as ReachabilityRecord["status"], version));
  }
  expectKey("rv");
  const versionCount = readArrayHeader();
  const versions: ObserverVersion[] = [];
  for (let i = 0; i < versionCount; i++) {
    expectTuple(2);
    const observer = nodeAt(readUint());
    const version = readNumber();
    if (!Number.isSafeInteger(version)) throw NOT_MINE;
    versions.push(interner.observerVersion(observer, version));
  }
  expectKey("v");
  const clockCount = readArrayHeader();
  const clockMembers = compact ? base : memberCount;
  const clock: (readonly [string, number])[] = [];
  for (let i = 0; i < clockCount; i++) {
    expectTuple(2);
    let key: string;
    const t = bytes[pos];
    if (t !== undefined && (t < 0x80 || (t >= 0xcc && t <= 0xce))) {
      const k = readUint();
      if (k >= clockMembers) throw NOT_MINE;
      key = clockKeyOf(nodeAt(k));
    } else key = readString();
    const counter = readNumber();
    if (!Number.isSafeInteger(counter)) throw NOT_MINE;
    clock.push(counter > 0 ? interner.clockEntry(key, counter) : ([key, counter] as const));
  }
  expectKey("t");
  const tombstoneCount = readArrayHeader();
  const tombstones: Tombstone[] = [];
  for (let i = 0; i < tombstoneCount; i++) {
    expectTuple(2);
    const node = nodeAt(readUint());
    tombstones.push({ node, removedAtMs: readNumber() });
  }
  if (compact) {
    expectKey("mc");
    if (readUint() !== base) throw NOT_MINE;
  }
  if (pos !== bytes.length) throw NOT_MINE;
  return { members, records, versions, clock: Object.freeze(clock), tombstones };
}
