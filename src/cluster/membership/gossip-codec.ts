/**
 * Gossip on the wire. The pure Gossip value (core/membership) becomes a compact plain
 * structure that the msgpackr serializer encodes; decoding validates every field and
 * rebuilds the value through the core constructors (which assert the invariants), so a
 * malformed or hostile gossip becomes a typed `InvalidGossipError`, never a crash and
 * never a half-built state.
 *
 * Nodes are written as their unique-address strings (`protocol://system@host:port#uid`).
 */
import { ShardkitError } from "../../base/errors.js";
import { type Gossip, gossipOf, type Tombstone } from "../../core/membership/gossip.js";
import { type Member, memberFrom } from "../../core/membership/member.js";
import { isMemberStatus } from "../../core/membership/member-status.js";
import {
  type ObserverVersion,
  type ReachabilityRecord,
  ReachabilityStatus,
  reachabilityOf,
} from "../../core/membership/reachability.js";
import {
  parseUniqueAddress,
  type UniqueAddress,
  uniqueAddressToString,
} from "../../core/membership/unique-address.js";
import { vectorClockOf } from "../../core/membership/vector-clock.js";

export class InvalidGossipError extends ShardkitError {
  constructor(detail: string) {
    super("INVALID_GOSSIP", `invalid gossip: ${detail}`, { detail });
  }
}

type WireMember = [
  node: string,
  status: string,
  roles: string[],
  appVersion: string,
  dc: string,
  upNumber: number,
];

export interface WireGossip {
  readonly m: WireMember[];
  readonly s: string[];
  readonly r: [observer: string, subject: string, status: string, version: number][];
  readonly rv: [observer: string, version: number][];
  readonly v: [key: string, counter: number][];
  readonly t: [node: string, removedAtMs: number][];
}

const node = (u: UniqueAddress) => uniqueAddressToString(u);

export function gossipToWire(g: Gossip): WireGossip {
  return {
    m: g.members.map((x) => [
      node(x.uniqueAddress),
      x.status,
      [...x.roles],
      x.appVersion,
      x.dataCenter,
      x.upNumber,
    ]),
    s: g.overview.seen.map(node),
    r: g.overview.reachability.records.map((x) => [
      node(x.observer),
      node(x.subject),
      x.status,
      x.version,
    ]),
    rv: g.overview.reachability.versions.map((x) => [node(x.observer), x.version]),
    v: g.version.entries.map(([k, c]) => [k, c]),
    t: g.tombstones.map((x) => [node(x.node), x.removedAtMs]),
  };
}

export function gossipFromWire(data: unknown): Gossip {
  try {
    const w = asRecord(data, "gossip");
    const members = asArray(w.m, "m").map(memberFromWire);
    const seen = asArray(w.s, "s").map((x) => parseUniqueAddress(asString(x, "seen")));
    const records = asArray(w.r, "r").map(recordFromWire);
    const versions = asArray(w.rv, "rv").map((x): ObserverVersion => {
      const [o, v] = asTuple(x, 2, "rv");
      return {
        observer: parseUniqueAddress(asString(o, "rv observer")),
        version: asInt(v, "rv version"),
      };
    });
    const clock = asArray(w.v, "v").map((x) => {
      const [k, c] = asTuple(x, 2, "v");
      return [asString(k, "clock key"), asInt(c, "clock counter")] as const;
    });
    const tombstones = asArray(w.t, "t").map((x): Tombstone => {
      const [n, at] = asTuple(x, 2, "t");
      return {
        node: parseUniqueAddress(asString(n, "tombstone")),
        removedAtMs: asNumber(at, "removedAtMs"),
      };
    });
    return gossipOf({
      members,
      seen,
      reachability: reachabilityOf(records, versions),
      version: vectorClockOf(clock),
      tombstones,
    });
  } catch (e) {
    if (e instanceof InvalidGossipError) throw e;
    throw new InvalidGossipError(e instanceof Error ? e.message : String(e));
  }
}

function memberFromWire(x: unknown): Member {
  const [n, status, roles, appVersion, dc, upNumber] = asTuple(x, 6, "member");
  const s = asString(status, "member status");
  if (!isMemberStatus(s))
    throw new InvalidGossipError(`unknown member status ${JSON.stringify(s)}`);
  return memberFrom({
    uniqueAddress: parseUniqueAddress(asString(n, "member node")),
    status: s,
    roles: asArray(roles, "roles").map((r) => asString(r, "role")),
    appVersion: asString(appVersion, "appVersion"),
    dataCenter: asString(dc, "dataCenter"),
    upNumber: asInt(upNumber, "upNumber"),
  });
}

const REACHABILITY_STATUSES = new Set<string>(Object.values(ReachabilityStatus));

function recordFromWire(x: unknown): ReachabilityRecord {
  const [o, s, status, version] = asTuple(x, 4, "reachability record");
  const st = asString(status, "reachability status");
  if (!REACHABILITY_STATUSES.has(st))
    throw new InvalidGossipError(`unknown reachability status ${st}`);
  return {
    observer: parseUniqueAddress(asString(o, "observer")),
    subject: parseUniqueAddress(asString(s, "subject")),
    status: st as ReachabilityRecord["status"],
    version: asInt(version, "reachability version"),
  };
}

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
