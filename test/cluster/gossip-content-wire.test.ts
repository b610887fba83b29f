/**
 * The one-pass content writer and reader (src/cluster/membership/gossip-content-wire.ts):
 * on random gossips the writer's bytes are exactly msgpackr's bytes of the wire form
 * (whole and compact), the reader takes them and builds the gossip the general decoder
 * builds, and on damaged or foreign bytes the decoder (reader, then the general path)
 * ends exactly where the general decoder alone ends: the same gossip or an
 * InvalidGossipError.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  clearGossipCodecCaches,
  decodeGossipContent,
  GossipInterner,
  gossipFromWire,
  gossipToCompactWire,
  gossipToWire,
  InvalidGossipError,
} from "../../src/cluster/membership/gossip-codec.js";
import {
  readGossipContent,
  writeGossipContent,
} from "../../src/cluster/membership/gossip-content-wire.js";
import { NOT_CANONICAL } from "../../src/cluster/membership/gossip-message-wire.js";
import { type Gossip, gossipOf } from "../../src/core/membership/gossip.js";
import { memberFrom } from "../../src/core/membership/member.js";
import { MEMBER_STATUSES } from "../../src/core/membership/member-status.js";
import {
  emptyReachability,
  markReachable,
  markTerminated,
  markUnreachable,
  type Reachability,
} from "../../src/core/membership/reachability.js";
import { nodeOf, type UniqueAddress } from "../../src/core/membership/unique-address.js";
import { vectorClockOf } from "../../src/core/membership/vector-clock.js";
import { createMsgpackSerializer } from "../../src/protocol/msgpack-serializer.js";

const serializer = createMsgpackSerializer();

/** A node: mostly one cluster's prefix, sometimes another protocol, system or a long host. */
const nodeArb = fc
  .record({
    protocol: fc.constantFrom("shardkit", "shardkit", "shardkit", "akka"),
    system: fc.constantFrom("sk", "sk", "sk", "other"),
    host: fc.oneof(
      fc.integer({ min: 0, max: 2_000 }).map((i) => `n${i}`),
      fc.string({ minLength: 1, maxLength: 8 }).filter((s) => !/[#@:/]/.test(s)),
      fc.constant("h".repeat(70)),
    ),
    port: fc.integer({ min: 0, max: 65_535 }),
    uid: fc.oneof(
      fc.integer({ min: -(2 ** 31), max: 2 ** 31 }),
      fc.constant(Number.MAX_SAFE_INTEGER),
    ),
  })
  .map((x) => nodeOf(x.protocol, x.system, x.host, x.port, x.uid));

const gossipArb = fc
  .record({
    nodes: fc.uniqueArray(nodeArb, {
      minLength: 1,
      maxLength: 40,
      selector: (n) =>
        `${n.address.protocol}${n.address.system}${n.address.host}${n.address.port}#${n.uid}`,
    }),
    memberShare: fc.double({ min: 0, max: 1, noNaN: true }),
    members: fc.array(
      fc.record({
        status: fc.constantFrom(...MEMBER_STATUSES.filter((s) => s !== "removed")),
        roles: fc.array(fc.oneof(fc.constantFrom("a", "b", "backend"), fc.string()), {
          maxLength: 3,
        }),
        appVersion: fc.oneof(fc.constant("0.0.0"), fc.string({ maxLength: 80 })),
        dataCenter: fc.oneof(fc.constant("default"), fc.string({ minLength: 1, maxLength: 5 })),
        upNumber: fc.oneof(fc.integer(), fc.constant(2 ** 40)),
      }),
      { minLength: 40, maxLength: 40 },
    ),
    marks: fc.array(
      fc.tuple(
        fc.nat(39),
        fc.nat(39),
        fc.constantFrom("unreachable", "terminated", "reachable"),
        fc.nat(3),
      ),
      { maxLength: 60 },
    ),
    clock: fc.array(
      fc.tuple(
        fc.oneof(fc.nat(39), fc.string({ maxLength: 70 })),
        fc.oneof(fc.integer({ min: 1, max: 1_000 }), fc.constant(2 ** 45)),
      ),
      { maxLength: 40 },
    ),
    tombstones: fc.array(
      fc.oneof(
        fc.integer({ min: 0, max: 2 ** 32 + 5 }),
        fc.double({ min: -1e15, max: 1e15, noNaN: true }),
      ),
      { maxLength: 5 },
    ),
  })
  .map((x): Gossip => {
    const memberCount = Math.max(1, Math.round(x.nodes.length * x.memberShare));
    const nodes = x.nodes;
    const at = (i: number) => nodes[i % nodes.length] as UniqueAddress;
    const members = nodes
      .slice(0, memberCount)
      .map((n, i) =>
        memberFrom({ uniqueAddress: n, ...(x.members[i] as (typeof x.members)[number]) }),
      );
    let r: Reachability = emptyReachability;
    for (const [o, s, status, repeat] of x.marks) {
      // observers are members (a gossip invariant); subjects may be other nodes
      const observer = at(o % memberCount);
      if (observer === at(s)) continue;
      for (let k = 0; k <= repeat; k++)
        r =
          status === "unreachable"
            ? markUnreachable(r, observer, at(s))
            : status === "terminated"
              ? markTerminated(r, observer, at(s))
              : markReachable(markUnreachable(r, observer, at(s)), observer, at(s));
    }
    const clock = new Map<string, number>();
    for (const [k, c] of x.clock) {
      const key =
        typeof k === "number"
          ? `${at(k).address.protocol}://${at(k).address.system}@${at(k).address.host}:${at(k).address.port}#${at(k).uid}`
          : k;
      clock.set(key, c);
    }
    const nonMembers = nodes.slice(memberCount);
    return gossipOf({
      members,
      reachability: r,
      version: vectorClockOf([...clock]),
      tombstones: x.tombstones.slice(0, nonMembers.length).map((removedAtMs, i) => ({
        node: nonMembers[i] as UniqueAddress,
        removedAtMs,
      })),
    });
  });

const interner = new GossipInterner();

/** True if every string in `v` (nested arrays and objects) is ASCII. */
function allAscii(v: unknown): boolean {
  if (typeof v === "string") {
    for (let i = 0; i < v.length; i++) if (v.charCodeAt(i) >= 0x80) return false;
    return true;
  }
  if (Array.isArray(v)) return v.every(allAscii);
  if (typeof v === "object" && v !== null) return Object.values(v).every(allAscii);
  return true;
}

describe("gossip content in one pass", () => {
  it("writes exactly msgpackr's bytes of the wire form, whole and compact", () => {
    fc.assert(
      fc.property(gossipArb, (g) => {
        expect(writeGossipContent(g, false)).toEqual(serializer.toBinary(gossipToWire(g)));
        expect(writeGossipContent(g, true)).toEqual(serializer.toBinary(gossipToCompactWire(g)));
      }),
      { numRuns: 300 },
    );
  });

  it("reads what it writes into the gossip the general decoder builds", () => {
    let read = 0;
    fc.assert(
      fc.property(gossipArb, (g) => {
        for (const compact of [false, true]) {
          const bytes = writeGossipContent(g, compact) as Uint8Array;
          const local = compact ? g : undefined;
          const general = gossipFromWire(serializer.fromBinary(bytes), local);
          // the reader takes every content of ASCII strings; the others are the general path's
          const ascii = allAscii(compact ? gossipToCompactWire(g) : gossipToWire(g));

          const parts = readGossipContent(bytes, local?.members, interner);
          if (ascii) expect(parts).not.toBe(NOT_CANONICAL);
          if (parts !== NOT_CANONICAL) read++;
          clearGossipCodecCaches();
          expect(decodeGossipContent(bytes, local)).toEqual(general);
        }
      }),
      { numRuns: 300 },
    );
    expect(read).toBeGreaterThan(300);
  });

  it("ends where the general decoder ends on damaged bytes: the same gossip or InvalidGossipError", () => {
    const outcome = (f: () => Gossip): Gossip | "invalid" => {
      try {
        return f();
      } catch (e) {
        expect(e).toBeInstanceOf(InvalidGossipError);
        return "invalid";
      }
    };
    fc.assert(
      fc.property(
        gossipArb,
        fc.boolean(),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), {
          minLength: 1,
          maxLength: 3,
        }),
        fc.integer({ min: -3, max: 2 }),
        (g, compact, flips, cut) => {
          const bytes = (writeGossipContent(g, compact) as Uint8Array).slice();
          for (const [i, v] of flips) bytes[i % bytes.length] = v;
          const damaged =
            cut < 0
              ? bytes.subarray(0, Math.max(0, bytes.length + cut))
              : cut > 0
                ? Uint8Array.of(...bytes, 0xc0)
                : bytes;
          const local = compact ? g : undefined;
          const general = outcome(() => {
            let body: unknown;
            try {
              body = serializer.fromBinary(damaged);
            } catch {
              throw new InvalidGossipError("undecodable");
            }
            return gossipFromWire(body, local);
          });
          clearGossipCodecCaches();
          expect(outcome(() => decodeGossipContent(damaged, local))).toEqual(general);
        },
      ),
      { numRuns: 1_000 },
    );
  });

  it("leaves non-ASCII strings, foreign key orders and trailing bytes to the general decoder", () => {
    const n = (host: string) => nodeOf("shardkit", "sk", host, 2552, 1);
    const g = gossipOf({
      members: [
        memberFrom({ uniqueAddress: n("a"), status: "up" }),
        memberFrom({ uniqueAddress: n("b"), status: "up", roles: ["ünïcode"] }),
      ],
      reachability: markUnreachable(emptyReachability, n("a"), n("b")),
    });
    const bytes = writeGossipContent(g, false) as Uint8Array;
    expect(readGossipContent(bytes, undefined, interner)).toBe(NOT_CANONICAL);
    const w = gossipToWire(g);
    const reordered = serializer.toBinary({
      n: w.n,
      p: w.p,
      m: w.m,
      r: w.r,
      rv: w.rv,
      v: w.v,
      t: w.t,
    });
    expect(readGossipContent(reordered, undefined, interner)).toBe(NOT_CANONICAL);
    expect(decodeGossipContent(reordered)).toEqual(gossipFromWire(w));
    const ascii = gossipOf({ members: [g.members[0] as (typeof g.members)[number]] });
    const plain = writeGossipContent(ascii, false) as Uint8Array;
    expect(readGossipContent(plain, undefined, interner)).not.toBe(NOT_CANONICAL);
    expect(readGossipContent(Uint8Array.of(...plain, 0), undefined, interner)).toBe(NOT_CANONICAL);
    // a compact content needs the receiver's list of the same length
    const compact = writeGossipContent(ascii, true) as Uint8Array;
    expect(readGossipContent(compact, undefined, interner)).toBe(NOT_CANONICAL);
    expect(readGossipContent(compact, g.members, interner)).toBe(NOT_CANONICAL);
    expect(readGossipContent(compact, ascii.members, interner)).not.toBe(NOT_CANONICAL);
  });

  it("leaves contents in its layout that break a rule to the general decoder, which refuses them", () => {
    const n = (host: string) => nodeOf("shardkit", "sk", host, 2552, 1);
    const g = gossipOf({
      members: [
        memberFrom({ uniqueAddress: n("a"), status: "up" }),
        memberFrom({ uniqueAddress: n("b"), status: "up" }),
      ],
      // c is no member: it is node 2 of the table
      reachability: markUnreachable(emptyReachability, n("a"), n("c")),
    });
    const w = gossipToWire(g);
    const broken = [
      { ...w, v: [[2, 1]] }, // a clock key naming a node that is no member
      { ...w, r: [[0, 3, "unreachable", 1]] }, // a subject outside the node table
      { ...w, r: [[0, 2, "sleepy", 1]] }, // an unknown reachability status
      { ...w, m: [["asleep", [], "0.0.0", "default", 0], ...w.m.slice(1)] }, // member status
      { ...w, m: [...w.m, ...w.m] }, // more members than nodes
    ];
    for (const wire of broken) {
      const bytes = serializer.toBinary(wire);
      expect(readGossipContent(bytes, undefined, interner)).toBe(NOT_CANONICAL);
      clearGossipCodecCaches();
      expect(() => decodeGossipContent(bytes)).toThrow(InvalidGossipError);
    }
    // the reader takes a table whose versions do not cover its rows; the core
    // constructor refuses it, as it refuses it from the general decoder
    const low = serializer.toBinary({ ...w, rv: [[0, 0]] });
    expect(readGossipContent(low, undefined, interner)).not.toBe(NOT_CANONICAL);
    clearGossipCodecCaches();
    expect(() => decodeGossipContent(low)).toThrow(InvalidGossipError);
    expect(() => gossipFromWire({ ...w, rv: [[0, 0]] })).toThrow(InvalidGossipError);
    // the compact form: `m` must be empty, `mc` the receiver's member count
    const c = gossipToCompactWire(g);
    for (const wire of [
      { ...c, m: w.m },
      { ...c, mc: 3 },
    ]) {
      const bytes = serializer.toBinary(wire);
      expect(readGossipContent(bytes, g.members, interner)).toBe(NOT_CANONICAL);
    }
    expect(readGossipContent(serializer.toBinary(c), g.members, interner)).not.toBe(NOT_CANONICAL);
  });
});
