/**
 * Join, Welcome and InitJoin on the receiving node (src/core/membership/join.ts), case by
 * case: every refusal reason, a retried Join welcomed again, a new incarnation downing
 * its predecessor, the joined member's fields and the stamped gossip, a Welcome accepted
 * only from the node joined and only with self in it, and InitJoin acked only by a joined
 * member that is neither down nor exiting.
 */
import { describe, expect, it } from "vitest";
import { addressOf } from "../../../src/core/membership/address.js";
import {
  clockKeyOf,
  emptyGossip,
  type Gossip,
  gossipOf,
  seenBy,
} from "../../../src/core/membership/gossip.js";
import {
  JoinRefusedReason,
  type JoinRequest,
  onInitJoin,
  onJoin,
  onWelcome,
} from "../../../src/core/membership/join.js";
import { memberFrom } from "../../../src/core/membership/member.js";
import type { MemberStatus } from "../../../src/core/membership/member-status.js";
import {
  type MembershipState,
  membershipStateOf,
} from "../../../src/core/membership/membership-state.js";
import { pairStatus } from "../../../src/core/membership/reachability.js";
import { nodeOf, type UniqueAddress } from "../../../src/core/membership/unique-address.js";
import { clockCounter, vectorClockOf } from "../../../src/core/membership/vector-clock.js";

const n = (host: string, uid = 1) => nodeOf("shardkit", "sys", host, 2552, uid);
const [a, b, c] = [n("a"), n("b"), n("c")] as const;
const m = (node: UniqueAddress, status: MemberStatus) =>
  memberFrom({ uniqueAddress: node, status, upNumber: status === "joining" ? undefined : 1 });
const view = (self: UniqueAddress, g: Gossip): MembershipState =>
  membershipStateOf({ latestGossip: g, selfUniqueAddress: self });
const upCluster = (self: UniqueAddress, ...others: [UniqueAddress, MemberStatus][]) =>
  view(
    self,
    gossipOf({
      members: [m(self, "up"), ...others.map(([node, status]) => m(node, status))],
      seen: [self],
      version: vectorClockOf({ [clockKeyOf(self)]: 3 }),
    }),
  );
const join = (node: UniqueAddress, rest: Omit<JoinRequest, "node"> = {}): JoinRequest => ({
  node,
  ...rest,
});

describe("join handling", () => {
  it("refuses another protocol or system before anything else", () => {
    const s = upCluster(a);
    expect(onJoin(s, join(nodeOf("pekko", "sys", "b", 2552, 1)))).toEqual({
      type: "refused",
      reason: JoinRefusedReason.ProtocolMismatch,
    });
    expect(onJoin(s, join(nodeOf("shardkit", "other", "b", 2552, 1)))).toEqual({
      type: "refused",
      reason: JoinRefusedReason.SystemMismatch,
    });
    // even on a node that has not joined: the mismatch is named, not not-initialized
    const fresh = view(a, emptyGossip);
    expect(onJoin(fresh, join(nodeOf("shardkit", "other", "b", 2552, 1)))).toMatchObject({
      reason: JoinRefusedReason.SystemMismatch,
    });
  });

  it("a node that has not joined admits only itself, and only once", () => {
    const fresh = view(a, emptyGossip);
    expect(onJoin(fresh, join(b))).toEqual({
      type: "refused",
      reason: JoinRefusedReason.NotInitialized,
    });
    const self = onJoin(fresh, join(a, { roles: ["r"] }));
    expect(self.type).toBe("joined");
    if (self.type !== "joined") return;
    expect(self.welcome).toBeUndefined();
    expect(self.formedNewCluster).toBe(true);
    expect(self.state.latestGossip.members.map((x) => [x.uniqueAddress, x.status])).toEqual([
      [a, "joining"],
    ]);
    expect(seenBy(self.state.latestGossip)).toEqual([a]);
    expect(self.events).toContainEqual(expect.objectContaining({ type: "member-joined" }));
    expect(onJoin(self.state, join(a))).toEqual({
      type: "refused",
      reason: JoinRefusedReason.SelfAlreadyMember,
    });
  });

  it("a down or exiting node refuses joins", () => {
    for (const status of ["down", "exiting"] as const) {
      const s = view(a, gossipOf({ members: [m(a, status), m(c, "up")] }));
      expect(onJoin(s, join(b)), status).toEqual({
        type: "refused",
        reason: JoinRefusedReason.SelfDownOrExiting,
      });
    }
    for (const status of ["leaving", "joining", "weakly-up"] as const) {
      const s = view(a, gossipOf({ members: [m(a, status)] }));
      expect(onJoin(s, join(b)).type, status).toBe("joined");
    }
  });

  it("a removed or downed incarnation never comes back", () => {
    const tombstoned = view(
      a,
      gossipOf({ members: [m(a, "up")], tombstones: [{ node: b, removedAtMs: 5 }] }),
    );
    expect(onJoin(tombstoned, join(b))).toEqual({
      type: "refused",
      reason: JoinRefusedReason.Tombstoned,
    });
    const downed = upCluster(a, [b, "down"]);
    expect(onJoin(downed, join(b))).toEqual({
      type: "refused",
      reason: JoinRefusedReason.Downed,
    });
  });

  it("a new joiner is added as joining with its fields, stamped by self and seen by self only", () => {
    const s = upCluster(a, [c, "up"]);
    const r = onJoin(s, join(b, { roles: ["y", "x"], appVersion: "1.2.3", dataCenter: "dc2" }));
    expect(r.type).toBe("joined");
    if (r.type !== "joined") return;
    const g = r.state.latestGossip;
    expect(g.members.find((x) => x.uniqueAddress === b)).toEqual(
      memberFrom({
        uniqueAddress: b,
        status: "joining",
        roles: ["x", "y"],
        appVersion: "1.2.3",
        dataCenter: "dc2",
      }),
    );
    expect(clockCounter(g.version, clockKeyOf(a))).toBe(4);
    expect(seenBy(g)).toEqual([a]);
    expect(r.welcome).toEqual({ from: a, gossip: g });
    expect(r.formedNewCluster).toBe(false);
    expect(r.events).toEqual([
      {
        type: "member-joined",
        member: expect.objectContaining({ uniqueAddress: b, status: "joining" }),
      },
    ]);
    // the defaults: no roles, version 0.0.0, the default data center
    const plain = onJoin(s, join(b));
    if (plain.type !== "joined") throw new Error(plain.type);
    expect(plain.state.latestGossip.members.find((x) => x.uniqueAddress === b)).toEqual(
      memberFrom({ uniqueAddress: b, status: "joining" }),
    );
  });

  it("the same incarnation joining again is welcomed again with the unchanged gossip", () => {
    const s = upCluster(a, [b, "joining"]);
    expect(onJoin(s, join(n("b")))).toEqual({
      type: "welcome-again",
      welcome: { from: a, gossip: s.latestGossip },
    });
  });

  it("a new incarnation of a member's host:port downs the old one, marked terminated by self", () => {
    const s = upCluster(a, [b, "up"], [c, "up"]);
    const newB = n("b", 2);
    const r = onJoin(s, join(newB));
    expect(r.type).toBe("downed-old-incarnation");
    if (r.type !== "downed-old-incarnation") return;
    expect(r.old).toBe(b);
    const g = r.state.latestGossip;
    expect(g.members.map((x) => [x.uniqueAddress.address.host, x.status])).toEqual([
      ["a", "up"],
      ["b", "down"],
      ["c", "up"],
    ]);
    expect(pairStatus(g.overview.reachability, a, b)).toBe("terminated");
    expect(clockCounter(g.version, clockKeyOf(a))).toBe(4);
    expect(seenBy(g)).toEqual([a]);
    expect(r.events).toContainEqual(expect.objectContaining({ type: "member-downed" }));
    // once down, the new incarnation waits for the removal
    expect(onJoin(r.state, join(newB))).toEqual({
      type: "refused",
      reason: JoinRefusedReason.OldIncarnationPendingRemoval,
    });
  });

  it("accepts a Welcome only before joining, from the node joined, with self in it", () => {
    const g = gossipOf({ members: [m(a, "up"), m(b, "joining")], seen: [a] });
    const fresh = view(b, emptyGossip);
    expect(onWelcome(fresh, { from: a, gossip: g }, c.address)).toEqual({
      type: "ignored",
      reason: "unexpected-sender",
    });
    expect(
      onWelcome(fresh, { from: a, gossip: gossipOf({ members: [m(a, "up")] }) }, a.address),
    ).toEqual({ type: "ignored", reason: "self-not-in-gossip" });
    const r = onWelcome(fresh, { from: a, gossip: g }, addressOf("shardkit", "sys", "a", 2552));
    expect(r.type).toBe("welcomed");
    if (r.type !== "welcomed") return;
    expect(r.replyTo).toBe(a);
    expect(r.state.latestGossip.members).toBe(g.members);
    expect(seenBy(r.state.latestGossip)).toEqual([a, b]);
    expect(r.events.map((e) => e.type)).toEqual(["member-up", "member-joined", "leader-changed"]);
    expect(onWelcome(r.state, { from: a, gossip: g }, a.address)).toEqual({
      type: "ignored",
      reason: "already-joined",
    });
    // a welcome from self (self-join) is not answered
    const own = onWelcome(
      view(b, emptyGossip),
      { from: b, gossip: gossipOf({ members: [m(b, "joining")] }) },
      b.address,
    );
    expect(own.type === "welcomed" && own.replyTo).toBeUndefined();
    expect(own.type).toBe("welcomed");
  });

  it("acks InitJoin only as a member that is neither down nor exiting", () => {
    expect(onInitJoin(view(a, emptyGossip))).toEqual({ type: "init-join-nack", from: a.address });
    for (const status of ["down", "exiting"] as const) {
      expect(onInitJoin(view(a, gossipOf({ members: [m(a, status)] }))), status).toEqual({
        type: "init-join-nack",
        from: a.address,
      });
    }
    for (const status of ["joining", "weakly-up", "up", "leaving"] as const) {
      expect(onInitJoin(view(a, gossipOf({ members: [m(a, status)] }))), status).toEqual({
        type: "init-join-ack",
        from: a.address,
      });
    }
  });

  it("self joining a view that has members but not self forms no new cluster", () => {
    // (the view of a member removed by the others; only an empty view is a new cluster)
    const s = view(a, gossipOf({ members: [m(b, "up")] }));
    const r = onJoin(s, join(a));
    expect(r.type).toBe("joined");
    if (r.type !== "joined") return;
    expect(r.formedNewCluster).toBe(false);
    expect(r.welcome).toBeUndefined();
  });
});
