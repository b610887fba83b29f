/**
 * Cases of the membership view and its neighbours not covered elsewhere: convergence
 * when the self DC has no up member yet (joiners and weakly-up members must have seen it,
 * exiting ones not) and with up members (joiners need not), leaders of two data centers
 * over one gossip, self counted in its own data center, ties of the youngest member,
 * gossip targets of an exiting member in member order, the cross-DC reachability filter,
 * the heartbeat ring of a sender outside it, cluster settings' checks of the role counts,
 * and the texts of the errors of the member model.
 */
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/base/errors.js";
import { addressOf, InvalidAddressError } from "../../../src/core/membership/address.js";
import {
  type ClusterEvent,
  diffMemberEvents,
  diffReachabilityEvents,
} from "../../../src/core/membership/cluster-events.js";
import { resolveClusterSettings } from "../../../src/core/membership/cluster-settings.js";
import { emptyGossip, gossipOf } from "../../../src/core/membership/gossip.js";
import { HeartbeatRing, receivers } from "../../../src/core/membership/heartbeat-ring.js";
import { memberFrom, withStatus } from "../../../src/core/membership/member.js";
import type { MemberStatus } from "../../../src/core/membership/member-status.js";
import { IllegalMemberTransitionError } from "../../../src/core/membership/member-transitions.js";
import {
  convergence,
  dcReachabilityWithoutObservationsWithin,
  gossipTargetsForExitingMembers,
  isInSameDc,
  isReachableExcludingDownedObservers,
  leader,
  membershipStateOf,
  youngestMember,
} from "../../../src/core/membership/membership-state.js";
import { emptyReachability, markUnreachable } from "../../../src/core/membership/reachability.js";
import {
  compareUniqueAddresses,
  nodeOf,
  type UniqueAddress,
} from "../../../src/core/membership/unique-address.js";

const n = (host: string) => nodeOf("shardkit", "sys", host, 2552, 1);
const [a, b, c, d] = [n("a"), n("b"), n("c"), n("d")] as const;
const m = (
  node: UniqueAddress,
  status: MemberStatus,
  opts: { roles?: string[]; upNumber?: number; dataCenter?: string } = {},
) => memberFrom({ uniqueAddress: node, status, ...opts });
const view = (members: ReturnType<typeof m>[], seen: UniqueAddress[], self = a, selfDc?: string) =>
  membershipStateOf({ latestGossip: gossipOf({ members, seen }), selfUniqueAddress: self, selfDc });
const hosts = (nodes: readonly UniqueAddress[]) => nodes.map((x) => x.address.host);
const types = (events: readonly ClusterEvent[]) =>
  events.map((e) => ("member" in e ? `${e.type} ${e.member.uniqueAddress.address.host}` : e.type));

describe("membership view cases", () => {
  it("without an up member every joiner and weakly-up member must have seen the gossip", () => {
    expect(convergence(view([m(a, "joining"), m(b, "weakly-up")], [a]))).toBe(false);
    expect(convergence(view([m(a, "joining"), m(b, "joining")], [a]))).toBe(false);
    expect(convergence(view([m(a, "joining"), m(b, "weakly-up")], [a, b]))).toBe(true);
    // an exiting member need not have seen it
    expect(convergence(view([m(a, "joining"), m(b, "exiting")], [a]))).toBe(true);
  });

  it("with an up member joiners need not have seen the gossip", () => {
    expect(convergence(view([m(a, "up"), m(b, "joining"), m(c, "weakly-up")], [a]))).toBe(true);
  });

  it("the leader of each data center over the same gossip", () => {
    const g = gossipOf({ members: [m(a, "up"), m(b, "up", { dataCenter: "dc2" })] });
    const s = (selfDc: string, self: UniqueAddress) =>
      membershipStateOf({ latestGossip: g, selfUniqueAddress: self, selfDc });
    expect(leader(s("default", a))).toBe(a);
    expect(leader(s("dc2", a))).toBe(b);
    expect(leader(s("dc3", a))).toBeUndefined();
  });

  it("self is in its own data center even before it is a member", () => {
    const s = membershipStateOf({ latestGossip: emptyGossip, selfUniqueAddress: a });
    expect(isInSameDc(s, a)).toBe(true);
    expect(isInSameDc(s, b)).toBe(false);
    expect(isReachableExcludingDownedObservers(s, b)).toBe(false);
  });

  it("of members with the same up-number the first in member order is the youngest", () => {
    const s = view(
      [m(c, "up", { upNumber: 4 }), m(b, "up", { upNumber: 4 }), m(a, "up", { upNumber: 1 })],
      [],
    );
    expect(youngestMember(s)?.uniqueAddress).toBe(b);
  });

  it("exiting gossip targets come in member order, whatever their age", () => {
    const s = view(
      [
        m(a, "up", { upNumber: 3, roles: ["r"] }),
        m(b, "up", { upNumber: 2 }),
        m(c, "up", { upNumber: 1 }),
        m(d, "exiting", { upNumber: 4, roles: ["r"] }),
      ],
      [],
    );
    expect(
      hosts(
        gossipTargetsForExitingMembers(s, [m(d, "exiting", { roles: ["r"] })]).map(
          (x) => x.uniqueAddress,
        ),
      ),
    ).toEqual(["a", "b", "c", "d"]);
  });

  it("cross-DC reachability keeps only rows about other data centers' members", () => {
    const r = markUnreachable(markUnreachable(emptyReachability, a, c), a, b);
    const s = membershipStateOf({
      latestGossip: gossipOf({
        members: [m(a, "up"), m(b, "up"), m(c, "up", { dataCenter: "dc2" })],
        reachability: r,
      }),
      selfUniqueAddress: a,
    });
    expect(hosts(dcReachabilityWithoutObservationsWithin(s).records.map((x) => x.subject))).toEqual(
      ["c"],
    );
  });

  it("a member added between two others is one event", () => {
    const before = view([m(a, "up"), m(c, "up")], []);
    const after = view([m(a, "up"), m(b, "joining"), m(c, "up")], []);
    expect(types(diffMemberEvents(before, after))).toEqual(["member-joined b"]);
  });

  it("reachability events of two views of one gossip: self and data center apply", () => {
    const g = gossipOf({
      members: [m(a, "up"), m(b, "up")],
      reachability: markUnreachable(emptyReachability, a, b),
    });
    const s = (self: UniqueAddress, selfDc?: string) =>
      membershipStateOf({ latestGossip: g, selfUniqueAddress: self, selfDc });
    expect(types(diffReachabilityEvents(s(b), s(a)))).toEqual(["unreachable-member b"]);
    expect(types(diffReachabilityEvents(s(a), s(b)))).toEqual(["reachable-member b"]);
    expect(types(diffReachabilityEvents(s(a), s(a, "dc2")))).toEqual(["reachable-member b"]);
    expect(types(diffReachabilityEvents(s(a, "dc2"), s(a)))).toEqual(["unreachable-member b"]);
  });

  it("a heartbeat ring asked for a sender outside it places the sender on the ring", () => {
    const members = ["m1", "m2", "m3", "m4", "m5", "m6"].map(n);
    const outsider = n("x");
    const ring = new HeartbeatRing(members, { monitoredByNrOfMembers: 2 });
    expect(ring.receivers(outsider)).toEqual(
      receivers(outsider, members, { monitoredByNrOfMembers: 2 }),
    );
    expect(ring.receivers(outsider)).toHaveLength(2);
    // receivers and observers come in node order
    const all = new HeartbeatRing(members, { monitoredByNrOfMembers: 4 });
    for (const node of members) {
      const r = all.receivers(node);
      expect([...r].sort(compareUniqueAddresses)).toEqual(r);
      const o = all.observersOf(node);
      expect([...o].sort(compareUniqueAddresses)).toEqual(o);
    }
    expect(() => new HeartbeatRing(members, { monitoredByNrOfMembers: 0 })).toThrow(
      "monitoredByNrOfMembers must be an integer >= 1, got 0",
    );
  });

  it("cluster settings name what a duration and the role counts must be", () => {
    const message = (overrides: Record<string, unknown>) => {
      try {
        resolveClusterSettings(overrides as never);
      } catch (e) {
        expect(e).toBeInstanceOf(ConfigError);
        return (e as Error).message;
      }
      throw new Error("accepted");
    };
    expect(message({ gossipIntervalMs: -5 })).toContain("a duration in milliseconds > 0");
    for (const value of [5, "x", null, ["a"]])
      expect(message({ roleMinNrOfMembers: value }), JSON.stringify(value)).toContain(
        "an object { role: count }",
      );
    expect(message({ roleMinNrOfMembers: { "": 1 } })).toContain("non-empty role names");
  });

  it("errors of the member model name their input", () => {
    try {
      addressOf("", "s", "h", 1);
      throw new Error("accepted");
    } catch (e) {
      expect(e).toBeInstanceOf(InvalidAddressError);
      expect((e as Error).message).toBe(
        'invalid address "://s@h:1": protocol, system and host must be non-empty',
      );
    }
    const removed = m(a, "removed");
    try {
      withStatus(removed, "up");
      throw new Error("accepted");
    } catch (e) {
      expect(e).toBeInstanceOf(IllegalMemberTransitionError);
      const err = e as IllegalMemberTransitionError;
      expect(err.message).toBe(
        "illegal member status transition removed -> up for shardkit://sys@a:2552#1",
      );
      expect(err.name).toBe("IllegalMemberTransitionError");
    }
    expect(memberFrom({ uniqueAddress: a, status: "up" }).roles).toEqual([]);
    expect(() =>
      membershipStateOf({ latestGossip: emptyGossip, selfUniqueAddress: a, crossDcConnections: 0 }),
    ).toThrow("crossDcConnections must be an integer >= 1, got 0");
  });
});
