/**
 * The membership message codec (src/cluster/membership/membership-messages.ts): every
 * kind but gossip (gossip-codec.test.ts) survives a round trip; a body of the wrong
 * shape, bytes that are not a record and an unknown kind decode to undefined (the
 * driver counts them as bad input) and never throw.
 */
import { describe, expect, it } from "vitest";
import {
  decodeMembershipMessage,
  encodeMembershipMessage,
  MembershipKind,
  type MembershipMessage,
  STALE,
} from "../../src/cluster/membership/membership-messages.js";
import { clockKeyOf, gossipOf, membersHashOf } from "../../src/core/membership/gossip.js";
import { type Member, memberFrom } from "../../src/core/membership/member.js";
import { nodeOf } from "../../src/core/membership/unique-address.js";
import { type VectorClock, vectorClockOf } from "../../src/core/membership/vector-clock.js";
import { SerializerRegistry } from "../../src/protocol/serializer-registry.js";

const registry = new SerializerRegistry();
const roundTrip = (m: MembershipMessage) =>
  decodeMembershipMessage(registry, m.kind, encodeMembershipMessage(registry, m));
const raw = (body: unknown) => registry.defaultSerializer.toBinary(body);

describe("membership message codec", () => {
  it("round-trips every kind but gossip", () => {
    const messages: MembershipMessage[] = [
      { kind: MembershipKind.GossipStatus, version: [["a:1", 3]], seenDigest: 7 },
      { kind: MembershipKind.Join, roles: ["web"], appVersion: "1.2.0" },
      { kind: MembershipKind.InitJoin },
      { kind: MembershipKind.InitJoinAck },
      { kind: MembershipKind.InitJoinNack },
      { kind: MembershipKind.Heartbeat, seq: 12 },
      { kind: MembershipKind.HeartbeatRsp, seq: 12 },
      { kind: MembershipKind.ExitingConfirmed, node: "shardkit://sk@a:2552#1" },
      { kind: MembershipKind.JoinRefused, reason: "tombstoned" },
    ];
    for (const m of messages) expect(roundTrip(m)).toEqual(m);
  });

  it("a body of the wrong shape, bytes that are no record, or an unknown kind: undefined", () => {
    expect(decodeMembershipMessage(registry, MembershipKind.JoinRefused, raw({}))).toBeUndefined();
    expect(
      decodeMembershipMessage(registry, MembershipKind.JoinRefused, raw({ reason: 3 })),
    ).toBeUndefined();
    expect(
      decodeMembershipMessage(registry, MembershipKind.Heartbeat, raw({ seq: 1.5 })),
    ).toBeUndefined();
    expect(
      decodeMembershipMessage(registry, MembershipKind.Join, raw({ roles: [1], appVersion: "" })),
    ).toBeUndefined();
    expect(decodeMembershipMessage(registry, MembershipKind.InitJoin, raw([1, 2]))).toBeUndefined();
    expect(
      decodeMembershipMessage(registry, MembershipKind.InitJoin, new Uint8Array([0xc1])),
    ).toBeUndefined();
    expect(decodeMembershipMessage(registry, 99, raw({}))).toBeUndefined();
  });
});

describe("gossip status: encoded once per version, decoded once per bytes", () => {
  const version = Object.freeze([
    Object.freeze(["a:1", 3] as const),
    Object.freeze(["b:1", 1] as const),
  ]);
  const status = (seenDigest: number, seen?: readonly number[]): MembershipMessage =>
    seen === undefined
      ? { kind: MembershipKind.GossipStatus, version, seenDigest }
      : { kind: MembershipKind.GossipStatus, version, seenDigest, seen };

  it("the same version array, digest and seen set: the same bytes object", () => {
    const seen = Object.freeze([3]);
    const first = encodeMembershipMessage(registry, status(7));
    expect(encodeMembershipMessage(registry, status(7))).toBe(first);
    const other = encodeMembershipMessage(registry, status(8));
    expect(other).not.toBe(first);
    expect(decodeMembershipMessage(registry, MembershipKind.GossipStatus, other)).toEqual(
      status(8),
    );
    const withSeen = encodeMembershipMessage(registry, status(8, seen));
    expect(encodeMembershipMessage(registry, status(8, seen))).toBe(withSeen);
    expect(decodeMembershipMessage(registry, MembershipKind.GossipStatus, withSeen)).toEqual(
      status(8, seen),
    );
    // an equal version in another array is encoded again, to the same bytes
    const copy: MembershipMessage = {
      kind: MembershipKind.GossipStatus,
      version: version.map((e) => [e[0], e[1]] as [string, number]),
      seenDigest: 7,
    };
    const again = encodeMembershipMessage(registry, copy);
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
  });

  it("equal bytes decode to one frozen message; other or bad bytes do not hit", () => {
    const bytes = encodeMembershipMessage(registry, status(11));
    const a = decodeMembershipMessage(registry, MembershipKind.GossipStatus, bytes);
    const b = decodeMembershipMessage(registry, MembershipKind.GossipStatus, bytes.slice());
    expect(a).toBe(b);
    expect(Object.isFrozen(a)).toBe(true);
    expect(Object.isFrozen((a as { version: unknown }).version)).toBe(true);
    const bad = raw({ v: [["a:1", "x"]], d: 11 });
    expect(decodeMembershipMessage(registry, MembershipKind.GossipStatus, bad)).toBeUndefined();
    expect(decodeMembershipMessage(registry, MembershipKind.GossipStatus, bad)).toBeUndefined();
  });
});

describe("hashed gossip status on the wire", () => {
  it("round-trips, with an empty `v` that an earlier version reads as an empty version", () => {
    const m: MembershipMessage = {
      kind: MembershipKind.GossipStatus,
      version: [],
      seenDigest: 5,
      versionHash: [0xffffffff, 0],
    };
    const bytes = encodeMembershipMessage(registry, m);
    expect(decodeMembershipMessage(registry, MembershipKind.GossipStatus, bytes)).toEqual(m);
    const body = registry.defaultSerializer.fromBinary(bytes) as Record<string, unknown>;
    expect(body.v).toEqual([]);
    expect(body.h).toEqual([0xffffffff, 0]);
  });

  it("a hash that is not two unsigned 32-bit integers: undefined", () => {
    for (const h of [[1], [1, 2, 3], [-1, 0], [2 ** 32, 0], ["a", 0], 7])
      expect(
        decodeMembershipMessage(registry, MembershipKind.GossipStatus, raw({ v: [], d: 1, h })),
      ).toBeUndefined();
  });
});

describe("compact gossip status on the wire", () => {
  const node = (host: string) => nodeOf("shardkit", "sk", host, 2552, 7);
  const members = ["a", "b", "c", "d"].map((h) =>
    memberFrom({ uniqueAddress: node(h), status: "up" }),
  );
  const local = gossipOf({ members });
  const key = (i: number) => clockKeyOf((members[i] as Member).uniqueAddress);
  // entries of three members and one key of no member
  const version = Object.freeze(
    [
      [key(3), 9],
      [key(0), 2],
      ["shardkit://sk@gone:2552#1", 4],
      [key(1), 300],
    ].map((e) => Object.freeze(e as [string, number])),
  );
  const compact: MembershipMessage = {
    kind: MembershipKind.GossipStatus,
    version,
    seenDigest: 3,
    membersHash: membersHashOf(members),
    compactOn: members,
  };
  const whole: MembershipMessage = { ...compact, compactOn: undefined };
  delete (whole as { compactOn?: unknown }).compactOn;

  it("names members' entries by index: fewer bytes, the same version for a receiver holding the list", () => {
    const bytes = encodeMembershipMessage(registry, compact);
    const full = encodeMembershipMessage(registry, whole);
    expect(bytes.length).toBeLessThan(full.length - 60);
    const m = decodeMembershipMessage(registry, MembershipKind.GossipStatus, bytes, local);
    if (m === undefined || m === STALE || m.kind !== MembershipKind.GossipStatus)
      throw new Error(`not decoded: ${String(m)}`);
    expect(vectorClockOf(m.version)).toEqual(vectorClockOf(version));
    expect(m.membersHash).toEqual(membersHashOf(members));
    expect(m.seenDigest).toBe(3);
  });

  it("the receiver's own version comes back as the receiver's own clock entries", () => {
    // a version of members only, sorted (a clock), held by the receiver
    const ownVersion = vectorClockOf([
      [key(0), 2],
      [key(1), 300],
      [key(3), 9],
    ]);
    const mine = gossipOf({ members, version: ownVersion });
    const status = (v: VectorClock): MembershipMessage => ({
      kind: MembershipKind.GossipStatus,
      version: v.entries,
      seenDigest: 5,
      membersHash: membersHashOf(members),
      compactOn: members,
    });
    const decode = (m: MembershipMessage) => {
      const d = decodeMembershipMessage(
        registry,
        MembershipKind.GossipStatus,
        encodeMembershipMessage(registry, m),
        mine,
      );
      if (d === undefined || d === STALE || d.kind !== MembershipKind.GossipStatus)
        throw new Error(`not decoded: ${String(d)}`);
      return d.version;
    };
    expect(decode(status(ownVersion))).toBe(ownVersion.entries);
    // one counter apart, or one entry fewer: a version of its own, as sent
    for (const other of [
      vectorClockOf([
        [key(0), 2],
        [key(1), 301],
        [key(3), 9],
      ]),
      vectorClockOf([
        [key(0), 2],
        [key(3), 9],
      ]),
    ]) {
      const v = decode(status(other));
      expect(v).not.toBe(ownVersion.entries);
      expect(v).toEqual(other.entries);
    }
  });

  it("a receiver with another member list, or none: STALE (not bad input)", () => {
    const bytes = encodeMembershipMessage(registry, compact);
    const other = gossipOf({ members: members.slice(0, 3) });
    expect(decodeMembershipMessage(registry, MembershipKind.GossipStatus, bytes, other)).toBe(
      STALE,
    );
    expect(decodeMembershipMessage(registry, MembershipKind.GossipStatus, bytes)).toBe(STALE);
    // and a decode cached for the list that reads it is not handed to another list
    expect(decodeMembershipMessage(registry, MembershipKind.GossipStatus, bytes, local)).not.toBe(
      STALE,
    );
    expect(decodeMembershipMessage(registry, MembershipKind.GossipStatus, bytes, other)).toBe(
      STALE,
    );
  });

  it("malformed compact bodies are bad input (undefined)", () => {
    const mh = membersHashOf(members);
    for (const body of [
      { v: [], d: 1, mh, c: 1 }, // no vi
      { v: [], d: 1, mh, c: 1, vi: [0] }, // odd length
      { v: [], d: 1, mh, c: 1, vi: [0, -1] }, // negative counter
      { v: [], d: 1, mh, c: 1, vi: [9, 1] }, // no such member
      { v: [], d: 1, mh, c: 2, vi: [0, 1] }, // unknown form
      { v: [], d: 1, c: 1, vi: [0, 1] }, // no members hash
      { v: [], d: 1, mh, h: [1, 2], c: 1, vi: [0, 1] }, // hashed and compact
    ])
      expect(
        decodeMembershipMessage(registry, MembershipKind.GossipStatus, raw(body), local),
        JSON.stringify(body),
      ).toBeUndefined();
  });
});
