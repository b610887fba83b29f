/**
 * A compact gossip made against a member list the receiver does not hold (core/membership/
 * gossip-logic.ts, "Compact gossip" and "Own versions"): the receiver cannot decode it, and
 * answers with its full status so that the sender sends what it lacks in full (it used to
 * drop it and wait for the next round). Real remoting and cluster drivers in the simulator.
 */
import { describe, expect, it } from "vitest";
import {
  decodeMembershipMessage,
  encodeMembershipMessage,
  MembershipKind,
  STALE,
} from "../../src/cluster/membership/membership-messages.js";
import { uniqueAddressToString } from "../../src/core/membership/unique-address.js";
import { framePayloadBytes } from "../../src/protocol/framing.js";
import type { SimMember } from "./sim-cluster.js";
import { MeteredSimCluster, nodeNames } from "./sim-gossip-meter.js";

describe("stale compact gossip (simulator)", () => {
  it("is answered with the receiver's full status", async () => {
    const h = new MeteredSimCluster(7);
    const names = nodeNames(3);
    const seedNodes = [`${names[0]}:2552`];
    for (const n of names) await h.member(n, { seedNodes });
    await h.until(() => h.allUpAndConverged(names), 30_000);
    await h.world.advance(2_000);
    const [a, b] = names.map((n) => h.members.get(n) as SimMember) as [SimMember, SimMember];
    const fromB: { kind: number; payload: Uint8Array }[] = [];
    const send = b.remoting.sendControl.bind(b.remoting);
    b.remoting.sendControl = (node, kind, payload, urgent) => {
      if (node.hostPort === a.remoting.node.hostPort)
        fromB.push({ kind, payload: framePayloadBytes(payload) });
      send(node, kind, payload, urgent);
    };
    const fullStatusesFromB = () =>
      fromB.filter((m) => {
        if (m.kind !== MembershipKind.GossipStatus) return false;
        const decoded = decodeMembershipMessage(
          a.remoting.registry,
          m.kind,
          m.payload,
          a.cluster.membershipState.latestGossip,
        );
        return (
          decoded !== undefined &&
          decoded !== STALE &&
          decoded.kind === MembershipKind.GossipStatus &&
          decoded.versionHash === undefined &&
          decoded.version.length > 0
        );
      }).length;
    // the converged cluster: no full status from b to a within the window
    await h.world.advance(50);
    expect(fullStatusesFromB()).toBe(0);
    // a compact gossip from a, made against a member list b does not hold
    const payload = encodeMembershipMessage(a.remoting.registry, {
      kind: MembershipKind.Gossip,
      to: uniqueAddressToString(b.cluster.self),
      gossip: a.cluster.membershipState.latestGossip,
      membersHash: [1, 2],
      compact: true,
    });
    a.remoting.sendControl(b.remoting.node, MembershipKind.Gossip, payload);
    await h.world.advance(50);
    expect(fullStatusesFromB()).toBe(1);
    // nothing else changed: still converged, nobody unreachable
    expect(h.allUpAndConverged(names)).toBe(true);
    expect(b.remoting.stats.badMessages).toBe(0);
  }, 60_000);
});
