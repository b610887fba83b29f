/**
 * The compact gossip codec (src/cluster/membership/gossip-codec.ts): round trips of
 * gossip with every part set, the seen set beside the content, the content encoded once
 * per content, recent content decoded once, interning of nodes and members (bounded),
 * and typed errors for malformed input.
 */
import { describe, expect, it } from "vitest";
import {
  decodeGossip,
  encodeGossip,
  GOSSIP_INTERN_ENTRIES_MAX,
  GossipInterner,
  gossipFromWire,
  gossipToWire,
  InvalidGossipError,
} from "../../src/cluster/membership/gossip-codec.js";
import {
  decodeMembershipMessage,
  encodeMembershipMessage,
  MembershipKind,
  type MembershipMessage,
  STALE,
} from "../../src/cluster/membership/membership-messages.js";
import {
  clockKeyOf,
  type Gossip,
  gossipOf,
  incrementVersion,
  membersHashOf,
  removeMember,
  withSeen,
} from "../../src/core/membership/gossip.js";
import { memberFrom } from "../../src/core/membership/member.js";
import { emptyReachability, markUnreachable } from "../../src/core/membership/reachability.js";
import { nodeOf, type UniqueAddress } from "../../src/core/membership/unique-address.js";
import { SerializerRegistry } from "../../src/protocol/serializer-registry.js";

const node = (host: string, uid = 1): UniqueAddress => nodeOf("shardkit", "sk", host, 2552, uid);

function sample(size: number): Gossip {
  const nodes = Array.from({ length: size }, (_, i) =>
    node(`n${String(i).padStart(3, "0")}`, i - 5),
  );
  const members = nodes.map((n, i) =>
    memberFrom({
      uniqueAddress: n,
      status: i % 3 === 0 ? "joining" : "up",
      roles: i % 2 === 0 ? ["a", "b"] : [],
      upNumber: i,
    }),
  );
  const a = nodes[0] as UniqueAddress;
  const b = nodes[1] as UniqueAddress;
  let reachability = markUnreachable(emptyReachability, a, b);
  reachability = markUnreachable(reachability, b, nodes[2] as UniqueAddress);
  let g = gossipOf({
    members,
    seen: [a, nodes[size - 1] as UniqueAddress, nodes[7] as UniqueAddress],
    reachability,
  });
  g = incrementVersion(g, clockKeyOf(a));
  g = incrementVersion(g, "some-other-key");
  // a tombstone (a node no longer in the table of members)
  const gone = node("zz-gone", 42);
  g = gossipOf({
    members: [...g.members, memberFrom({ uniqueAddress: gone, status: "down" })],
    seen: g.overview.seen,
    reachability: g.overview.reachability,
    version: g.version,
  });
  return removeMember(g, gone, 1_234);
}

function expectSameGossip(actual: Gossip, expected: Gossip): void {
  expect(JSON.parse(JSON.stringify(actual))).toEqual(JSON.parse(JSON.stringify(expected)));
}

describe("gossip codec", () => {
  it("round-trips members, seen, reachability, version and tombstones", () => {
    const g = sample(20);
    const e = encodeGossip(g);
    expectSameGossip(decodeGossip(e.content, e.seen), g);
    expect(decodeGossip(e.content, e.seen).overview.seen).toHaveLength(3);
    // the wire form alone (without the seen set)
    expectSameGossip(gossipFromWire(gossipToWire(g)), withSeenOf(g, []));
  });

  it("writes the seen set beside the content: the same content bytes for any seen set", () => {
    const g = sample(20);
    const more = withSeen(g, node("n010", 5));
    const a = encodeGossip(g);
    const b = encodeGossip(more);
    expect(b.content).toBe(a.content); // encoded once, shared by identity
    expect(b.seen).not.toEqual(a.seen);
    expect(a.seen).toHaveLength(Math.ceil(20 / 7));
    for (const x of b.seen) expect(x >= 0 && x < 128).toBe(true);
    expect(decodeGossip(b.content, b.seen).overview.seen).toHaveLength(4);
  });

  it("decodes recent content once: the same bytes give the same content objects", () => {
    const g = sample(30);
    const e = encodeGossip(g);
    const copy = Uint8Array.from(e.content); // what another receiver gets
    const x = decodeGossip(e.content, e.seen);
    const y = decodeGossip(copy, [...e.seen]);
    expect(y.members).toBe(x.members);
    expect(y.version).toBe(x.version);
  });

  it("interns members: an unchanged member decodes to the same object, a changed one does not", () => {
    const g = sample(10);
    const first = gossipFromWire(gossipToWire(g));
    const changed = gossipOf({
      members: g.members.map((m, i) => (i === 2 ? memberFrom({ ...m, upNumber: 99 }) : m)),
      seen: g.overview.seen,
      reachability: g.overview.reachability,
      version: g.version,
      tombstones: g.tombstones,
    });
    const second = gossipFromWire(gossipToWire(changed));
    expect(second.members[0]).toBe(first.members[0]);
    expect(second.members[2]).not.toBe(first.members[2]);
    expect(second.members[2]?.upNumber).toBe(99);
    expect(second.members[0]?.uniqueAddress).toBe(first.members[0]?.uniqueAddress);
  });

  it("keeps each interning table within its bound, oldest out first", () => {
    expect(GOSSIP_INTERN_ENTRIES_MAX).toBeGreaterThanOrEqual(4_000);
    const interner = new GossipInterner(3);
    const texts = ["a", "b", "c", "d"].map((h) => `shardkit://sk@${h}:2552#1`);
    const nodes = texts.map((t) => interner.node(t));
    expect(interner.sizes.nodes).toBe(3);
    expect(interner.node(texts[3] as string)).toBe(nodes[3]); // still there
    expect(interner.node(texts[1] as string)).toBe(nodes[1]);
    expect(interner.node(texts[0] as string)).not.toBe(nodes[0]); // evicted, parsed again
    expect(interner.node(texts[0] as string)).toEqual(nodes[0]);
    for (const n of nodes) interner.member(n, "up", [], "1.0.0", "default", 1);
    expect(interner.sizes.members).toBe(3);
  });

  it("turns malformed input into InvalidGossipError", () => {
    const g = sample(8);
    const e = encodeGossip(g);
    expect(() => decodeGossip(e.content, [...e.seen, 1])).toThrow(InvalidGossipError);
    expect(() => decodeGossip(e.content, [200])).toThrow(InvalidGossipError);
    expect(() => decodeGossip(Uint8Array.of(0xc1), [])).toThrow(InvalidGossipError);
    const w = gossipToWire(g);
    expect(() => gossipFromWire({ ...w, r: [[0, 999, "unreachable", 1]] })).toThrow(
      InvalidGossipError,
    );
    expect(() => gossipFromWire({ ...w, m: [...w.m, ...w.m, ...w.m] })).toThrow(InvalidGossipError);
    expect(() => gossipFromWire({ ...w, n: ["not an address"] })).toThrow(InvalidGossipError);
  });

  it("is smaller than one node string per seen mark: a converged 250-member gossip", () => {
    const nodes = Array.from({ length: 250 }, (_, i) =>
      node(`n${String(i).padStart(3, "0")}`, 1_000_000_000_000 + i),
    );
    const g = gossipOf({
      members: nodes.map((n, i) => memberFrom({ uniqueAddress: n, status: "up", upNumber: i })),
      seen: nodes,
    });
    const e = encodeGossip(g);
    expect(e.seen).toHaveLength(36);
    // per member: status, roles, appVersion, data center, up-number, and the node suffix
    expect(e.content.length / 250).toBeLessThan(50);
  });
});

function withSeenOf(g: Gossip, seen: UniqueAddress[]): Gossip {
  return gossipOf({
    members: g.members,
    seen,
    reachability: g.overview.reachability,
    version: g.version,
    tombstones: g.tombstones,
  });
}

describe("compact gossip (without the member list)", () => {
  const registry = new SerializerRegistry();

  it("round-trips with the receiver's member list and is much smaller", () => {
    const g = sample(200);
    const whole = encodeGossip(g);
    const compact = encodeGossip(g, true);
    expect(compact.content.length * 4).toBeLessThan(whole.content.length);
    const decoded = decodeGossip(compact.content, compact.seen, g);
    expectSameGossip(decoded, g);
    // the receiver's members themselves (the same objects)
    expect(decoded.members).toBe(g.members);
    // without a member list, or another one: an error, never a wrong gossip
    expect(() => decodeGossip(compact.content, compact.seen)).toThrow(InvalidGossipError);
    expect(() => decodeGossip(compact.content, compact.seen, sample(199))).toThrow(
      InvalidGossipError,
    );
  });

  it("travels with the sender's members hash; a receiver with other members gets STALE", () => {
    const g = sample(30);
    const m: MembershipMessage = {
      kind: MembershipKind.Gossip,
      to: "shardkit://sk@n001:2552#-4",
      gossip: g,
      membersHash: membersHashOf(g.members),
      compact: true,
    };
    const bytes = encodeMembershipMessage(registry, m);
    const got = decodeMembershipMessage(registry, MembershipKind.Gossip, bytes, g);
    expect(got !== undefined && got !== STALE && got.kind === MembershipKind.Gossip).toBe(true);
    if (got === undefined || got === STALE || got.kind !== MembershipKind.Gossip) return;
    expectSameGossip(got.gossip, g);
    expect(got.compact).toBe(true);
    const other = sample(31);
    expect(decodeMembershipMessage(registry, MembershipKind.Gossip, bytes, other)).toBe(STALE);
    expect(decodeMembershipMessage(registry, MembershipKind.Gossip, bytes)).toBe(STALE);
    // a whole gossip carries the hash too (the receiver may answer compactly)
    const wholeBytes = encodeMembershipMessage(registry, { ...m, compact: false });
    const whole = decodeMembershipMessage(registry, MembershipKind.Gossip, wholeBytes);
    expect(whole !== undefined && whole !== STALE && whole.kind === MembershipKind.Gossip).toBe(
      true,
    );
    if (whole === undefined || whole === STALE || whole.kind !== MembershipKind.Gossip) return;
    expect(whole.compact).toBeUndefined();
    expect(whole.membersHash).toEqual(membersHashOf(g.members));
    expect(wholeBytes.length).toBeGreaterThan(bytes.length * 2);
  });
});
