/**
 * Membership messages on the CONTROL lane: gossip, gossip status, join conversation,
 * heartbeats, exiting confirmation. Each is msgpack-encoded plain data after one kind
 * byte (added by remoting); decoding validates shapes and returns undefined on bad input.
 * Gossip and Welcome carry the gossip's content as its own encoded bytes (`gb`) and its
 * seen set beside it (`s`, gossip-codec.ts): the content is encoded once whatever the
 * number of targets and seen marks; a gossip message is written as parts around that
 * content and read with the content as a view (gossip-message-wire.ts), so the content
 * is not copied into and out of every message. A gossip status may carry the seen set in the same
 * bitmap form (`s`; a seen status, core/membership/gossip-logic.ts); the receiver checks
 * it against its own members (gossip.ts isSeenBitsOf) before using it. A hashed status
 * carries the version as its 64-bit hash (`h`, two unsigned 32-bit integers) and an empty
 * `v`: a member of an earlier version, which ignores `h`, reads an empty version, older
 * than its own, and answers with its full gossip (more bytes, same outcome).
 * The message types live in core/membership/membership-messages.ts (the machine speaks them).
 *
 * A gossip status carries the whole version (one entry per node that ever changed the
 * state, which after a failure wave is most members), and a converged cluster sends the
 * same status over and over: the encoded status of a version, digest and seen set is kept
 * per sender (`statusPayloads`), and a receiver decodes the bytes of a status it decoded a
 * moment ago only once (STATUS_DECODE_CACHE_ENTRIES; in a converged cluster every member
 * sends the same bytes). Cached messages are frozen and shared.
 */

import { BytePool, sameBytes } from "../../base/bytes.js";
import { murmur3_32 } from "../../base/hash.js";
import { clockKeyOf, type Gossip, membersHashOf, sameHash } from "../../core/membership/gossip.js";
import type { Member } from "../../core/membership/member.js";
import {
  MembershipKind,
  type MembershipMessage,
} from "../../core/membership/membership-messages.js";
import { type FramePayload, framePayloadBytes } from "../../protocol/framing.js";
import type { SerializerRegistry } from "../../protocol/serializer-registry.js";
import { decodePlainRecord, encodePlain } from "../remoting/plain-payload.js";
import { decodeGossip, encodeGossip } from "./gossip-codec.js";
import { gossipMessageParts, NOT_CANONICAL, readGossipMessage } from "./gossip-message-wire.js";

export { MembershipKind, type MembershipMessage };

type Body = Record<string, unknown>;

/** Decoded status messages kept by their bytes (per process; see the module comment). */
export const STATUS_DECODE_CACHE_ENTRIES = 64;

type StatusMessage = Extract<MembershipMessage, { kind: typeof MembershipKind.GossipStatus }>;

/** The last encoding of each status version array (sendStatus shares one array per version). */
type StatusPayloads = WeakMap<
  readonly (readonly [string, number])[],
  {
    readonly serializer: unknown;
    readonly digest: number;
    readonly seen: readonly number[] | undefined;
    readonly membersHash: readonly [number, number] | undefined;
    readonly bytes: Uint8Array;
  }
>;
const statusPayloads: StatusPayloads = new WeakMap();
/** The same for compact statuses (a version is written against the sender's member list). */
const compactStatusPayloads: StatusPayloads = new WeakMap();

/**
 * Recently decoded statuses by murmur3 of their bytes, oldest out first; a compact one
 * with the member list it was read with.
 */
const decodedStatuses = new Map<
  number,
  {
    readonly bytes: Uint8Array;
    readonly message: StatusMessage;
    readonly members: readonly Member[] | undefined;
  }
>();
/** The copies of the bytes of `decodedStatuses` (a bounded FIFO: they pin a chunk or two). */
const decodedStatusBytes = new BytePool();

function frozenHash(h: readonly [number, number]): readonly [number, number] {
  return Object.freeze([h[0], h[1]] as const);
}

function encodeStatus(registry: SerializerRegistry, m: StatusMessage): Uint8Array {
  // hashed: a few bytes, and `version` (empty) is no key to remember it by
  if (m.versionHash !== undefined)
    return encodePlain(registry, statusBody(m, [], { h: m.versionHash }));
  const compact = m.compactOn !== undefined && m.membersHash !== undefined;
  const payloads = compact ? compactStatusPayloads : statusPayloads;
  const serializer = registry.defaultSerializer;
  const hit = payloads.get(m.version);
  if (
    hit !== undefined &&
    hit.serializer === serializer &&
    hit.digest === m.seenDigest &&
    hit.seen === m.seen &&
    hit.membersHash === m.membersHash
  )
    return hit.bytes;
  const bytes = encodePlain(
    registry,
    compact && m.compactOn !== undefined
      ? compactStatusBody(m, m.compactOn)
      : statusBody(m, m.version, {}),
  );
  payloads.set(m.version, {
    serializer,
    digest: m.seenDigest,
    seen: m.seen,
    membersHash: m.membersHash,
    bytes,
  });
  return bytes;
}

/** Clock key -> index of each member list a compact status was written against. */
const memberIndices = new WeakMap<readonly Member[], ReadonlyMap<string, number>>();

function memberIndexOf(members: readonly Member[]): ReadonlyMap<string, number> {
  let m = memberIndices.get(members);
  if (m === undefined) {
    m = new Map(members.map((x, i) => [clockKeyOf(x.uniqueAddress), i]));
    memberIndices.set(members, m);
  }
  return m;
}

/**
 * A compact status (core/membership/gossip-logic.ts, "Compact status"): the version's
 * entries of members as `vi`, pairs of member index and counter in one flat array, the
 * others (none, as a rule: removed members' entries are pruned) as keys in `v`; `c: 1`.
 */
function compactStatusBody(m: StatusMessage, members: readonly Member[]): Body {
  let kept = compactVersions.get(m.version);
  if (kept === undefined || kept.members !== members) {
    const index = memberIndexOf(members);
    const rest: (readonly [string, number])[] = [];
    const vi: number[] = [];
    for (const e of m.version) {
      const i = index.get(e[0]);
      if (i === undefined) rest.push(e);
      else vi.push(i, e[1]);
    }
    kept = { members, rest, vi };
    compactVersions.set(m.version, kept);
  }
  return statusBody(m, kept.rest, { vi: kept.vi, c: 1 });
}

/**
 * The compact form of each status version array, with the member list it was written
 * against: while a version spreads, its statuses differ in their seen sets and digests,
 * not in the version (sendStatus shares one array per version).
 */
const compactVersions = new WeakMap<
  readonly (readonly [string, number])[],
  {
    readonly members: readonly Member[];
    readonly rest: readonly (readonly [string, number])[];
    readonly vi: readonly number[];
  }
>();

function statusBody(m: StatusMessage, v: readonly unknown[], extra: Body): Body {
  const body: Body = { v, d: m.seenDigest, ...extra };
  if (m.seen !== undefined) body.s = m.seen;
  if (m.membersHash !== undefined) body.mh = m.membersHash;
  return body;
}

/**
 * True if the member-index pairs `vi` (a compact status's version without other keys)
 * name exactly the entries of `local`'s version, in its order.
 */
function isOwnVersion(local: Gossip, vi: readonly number[]): boolean {
  const entries = local.version.entries;
  if (entries.length * 2 !== vi.length) return false;
  const keys = clockKeysOf(local.members);
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i] as readonly [string, number];
    const k = keys[vi[2 * i] as number];
    if (k === undefined || e[1] !== vi[2 * i + 1] || e[0] !== k) return false;
  }
  return true;
}

/** The clock key of each member, in member order, per member list (lists are immutable). */
const memberClockKeys = new WeakMap<readonly Member[], readonly string[]>();

function clockKeysOf(members: readonly Member[]): readonly string[] {
  let keys = memberClockKeys.get(members);
  if (keys === undefined) {
    keys = members.map((m) => clockKeyOf(m.uniqueAddress));
    memberClockKeys.set(members, keys);
  }
  return keys;
}

function decodeStatus(
  registry: SerializerRegistry,
  bytes: Uint8Array,
  local: Gossip | undefined,
): MembershipMessage | typeof STALE | undefined {
  const h = murmur3_32(bytes);
  const hit = decodedStatuses.get(h);
  if (
    hit !== undefined &&
    (hit.members === undefined || hit.members === local?.members) &&
    sameBytes(hit.bytes, bytes)
  )
    return hit.message;
  const b = decodePlainRecord(registry, bytes);
  if (b === undefined) return undefined;
  let m: MembershipMessage | typeof STALE | undefined;
  try {
    m = decodeBody(MembershipKind.GossipStatus, b, local);
  } catch {
    return undefined;
  }
  if (m === STALE) return STALE;
  if (m === undefined || m.kind !== MembershipKind.GossipStatus) return undefined;
  // the decoded version and its entries are this decode's own arrays: frozen in place
  // (indexed: a for-of here allocated an iterator result per entry; our own version's
  // entries come frozen already)
  const entries = m.version;
  if (!Object.isFrozen(entries)) for (let i = 0; i < entries.length; i++) Object.freeze(entries[i]);
  const frozen: StatusMessage = Object.freeze({
    ...m,
    version: Object.freeze(m.version),
    ...(m.seen === undefined ? {} : { seen: Object.freeze(m.seen.slice()) }),
    ...(m.versionHash === undefined ? {} : { versionHash: frozenHash(m.versionHash) }),
    ...(m.membersHash === undefined ? {} : { membersHash: frozenHash(m.membersHash) }),
  });
  if (decodedStatuses.size >= STATUS_DECODE_CACHE_ENTRIES) {
    const oldest = decodedStatuses.keys().next();
    if (oldest.done !== true) decodedStatuses.delete(oldest.value);
  }
  decodedStatuses.set(h, {
    bytes: decodedStatusBytes.copy(bytes),
    message: frozen,
    members: b.c === undefined ? undefined : local?.members,
  });
  return frozen;
}

/** The message's bytes (encodeMembershipMessageParts, the parts copied into one array). */
export function encodeMembershipMessage(
  registry: SerializerRegistry,
  m: MembershipMessage,
): Uint8Array {
  return framePayloadBytes(encodeMembershipMessageParts(registry, m));
}

/**
 * The message's bytes; a gossip as parts around its shared content, which then goes
 * into the frame without a copy of its own (gossip-message-wire.ts).
 */
export function encodeMembershipMessageParts(
  registry: SerializerRegistry,
  m: MembershipMessage,
): FramePayload {
  let body: Body;
  switch (m.kind) {
    case MembershipKind.Gossip: {
      const compact = m.compact === true && m.membersHash !== undefined;
      const g = encodeGossip(m.gossip, compact);
      return gossipMessageParts(registry.defaultSerializer, m.to, g.content, {
        s: g.seen,
        ...(m.membersHash === undefined ? {} : { mh: m.membersHash }),
        ...(compact ? { c: 1 } : {}),
      });
    }
    case MembershipKind.Welcome: {
      const g = encodeGossip(m.gossip);
      body = { gb: g.content, s: g.seen };
      break;
    }
    case MembershipKind.GossipStatus:
      return encodeStatus(registry, m);
    case MembershipKind.Join:
      body = { roles: m.roles, appVersion: m.appVersion };
      break;
    case MembershipKind.Heartbeat:
    case MembershipKind.HeartbeatRsp:
      body = { seq: m.seq };
      break;
    case MembershipKind.ExitingConfirmed:
      body = { node: m.node };
      break;
    case MembershipKind.JoinRefused:
      body = { reason: m.reason };
      break;
    default:
      body = {};
  }
  return encodePlain(registry, body);
}

/**
 * A compact gossip or status made against a member list the receiver does not hold (any
 * more): not bad input, the member lists differ; either is answered with the full status
 * (core/membership/gossip-logic.ts, "Compact gossip" and "Compact status").
 */
export const STALE = "stale-compact-gossip" as const;

/**
 * The message of `bytes`, undefined when malformed, or STALE. `local`: the receiver's
 * gossip, whose member list a compact gossip is decoded with.
 */
export function decodeMembershipMessage(
  registry: SerializerRegistry,
  kind: number,
  bytes: Uint8Array,
  local?: Gossip,
): MembershipMessage | typeof STALE | undefined {
  if (kind === MembershipKind.GossipStatus) return decodeStatus(registry, bytes, local);
  let b: Body | undefined;
  if (kind === MembershipKind.Gossip) {
    const read = readGossipMessage(registry.defaultSerializer, bytes);
    b = read === NOT_CANONICAL ? decodePlainRecord(registry, bytes) : read;
  } else b = decodePlainRecord(registry, bytes);
  if (b === undefined) return undefined;
  try {
    return decodeBody(kind, b, local);
  } catch {
    return undefined;
  }
}

/** Two unsigned 32-bit integers (gossip-logic.ts versionHashOf). */
function isVersionHash(h: unknown): boolean {
  return (
    Array.isArray(h) &&
    h.length === 2 &&
    h.every((x) => Number.isSafeInteger(x) && (x as number) >= 0 && (x as number) <= 0xffffffff)
  );
}

function decodeBody(
  kind: number,
  b: Body,
  local?: Gossip,
): MembershipMessage | typeof STALE | undefined {
  switch (kind) {
    case MembershipKind.Gossip: {
      if (typeof b.to !== "string" || !(b.gb instanceof Uint8Array)) return undefined;
      if (b.mh !== undefined && !isVersionHash(b.mh)) return undefined;
      const membersHash = b.mh as readonly [number, number] | undefined;
      if (b.c === undefined)
        return {
          kind,
          to: b.to,
          gossip: decodeGossip(b.gb, b.s),
          ...(membersHash === undefined ? {} : { membersHash }),
        };
      // compact: decoded with our member list, if it is the one the sender meant
      if (
        b.c !== 1 ||
        membersHash === undefined ||
        local === undefined ||
        !sameHash(membersHash, membersHashOf(local.members))
      )
        return STALE;
      return {
        kind,
        to: b.to,
        gossip: decodeGossip(b.gb, b.s, local),
        membersHash,
        compact: true,
      };
    }
    case MembershipKind.Welcome:
      return b.gb instanceof Uint8Array ? { kind, gossip: decodeGossip(b.gb, b.s) } : undefined;
    case MembershipKind.GossipStatus: {
      if (
        !(
          Array.isArray(b.v) &&
          b.v.every(
            (e) => Array.isArray(e) && typeof e[0] === "string" && Number.isSafeInteger(e[1]),
          ) &&
          typeof b.d === "number" &&
          (b.s === undefined ||
            (Array.isArray(b.s) && b.s.every((e) => Number.isSafeInteger(e)))) &&
          (b.h === undefined || isVersionHash(b.h)) &&
          (b.mh === undefined || isVersionHash(b.mh))
        )
      )
        return undefined;
      let version = b.v as [string, number][];
      if (b.c !== undefined) {
        // compact: member indices into the sender's member list, which must be ours
        const vi = b.vi;
        if (
          b.c !== 1 ||
          b.mh === undefined ||
          b.h !== undefined ||
          !Array.isArray(vi) ||
          vi.length % 2 !== 0 ||
          !vi.every((x) => Number.isSafeInteger(x) && (x as number) >= 0)
        )
          return undefined;
        if (
          local === undefined ||
          !sameHash(b.mh as [number, number], membersHashOf(local.members))
        )
          return STALE;
        const members = local.members;
        // our own version sent back (the common case): its frozen entries, nothing built
        if (version.length === 0 && isOwnVersion(local, vi as number[]))
          version = local.version.entries as [string, number][];
        else {
          version = version.slice();
          for (let i = 0; i < vi.length; i += 2) {
            const member = members[vi[i] as number];
            if (member === undefined) return undefined;
            version.push([clockKeyOf(member.uniqueAddress), vi[i + 1] as number]);
          }
        }
      }
      return {
        kind,
        version,
        seenDigest: b.d,
        ...(b.s === undefined ? {} : { seen: b.s as number[] }),
        ...(b.h === undefined ? {} : { versionHash: b.h as [number, number] }),
        ...(b.mh === undefined ? {} : { membersHash: b.mh as [number, number] }),
      };
    }
    case MembershipKind.Join:
      return Array.isArray(b.roles) &&
        b.roles.every((r) => typeof r === "string") &&
        typeof b.appVersion === "string"
        ? { kind, roles: b.roles as string[], appVersion: b.appVersion }
        : undefined;
    case MembershipKind.InitJoin:
    case MembershipKind.InitJoinAck:
    case MembershipKind.InitJoinNack:
      return { kind };
    case MembershipKind.Heartbeat:
    case MembershipKind.HeartbeatRsp:
      return Number.isSafeInteger(b.seq) ? { kind, seq: b.seq as number } : undefined;
    case MembershipKind.ExitingConfirmed:
      return typeof b.node === "string" ? { kind, node: b.node } : undefined;
    case MembershipKind.JoinRefused:
      return typeof b.reason === "string" ? { kind, reason: b.reason } : undefined;
    default:
      return undefined;
  }
}
