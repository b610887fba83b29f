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
} from "../../src/cluster/membership/membership-messages.js";
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
