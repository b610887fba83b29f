/**
 * Cluster events as a diff of two views (src/core/membership/cluster-events.ts): one event
 * type per status, removals after status changes, reachability flips of in-DC nodes other
 * than self, then the leader and the role leaders (roles sorted); nothing for an unchanged
 * view, also when only the seen set or the version changed.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type ClusterEvent,
  diffClusterEvents,
  diffMemberEvents,
  diffReachabilityEvents,
} from "../../../src/core/membership/cluster-events.js";
import {
  type Gossip,
  gossipOf,
  incrementVersion,
  withReachability,
  withSeen,
} from "../../../src/core/membership/gossip.js";
import { memberFrom } from "../../../src/core/membership/member.js";
import type { MemberStatus } from "../../../src/core/membership/member-status.js";
import {
  dcReachabilityNoOutsideNodes,
  type MembershipState,
  membershipStateOf,
} from "../../../src/core/membership/membership-state.js";
import {
  allUnreachableOrTerminated,
  emptyReachability,
  markReachable,
  markTerminated,
  markUnreachable,
  type Reachability,
} from "../../../src/core/membership/reachability.js";
import {
  nodeOf,
  type UniqueAddress,
  uniqueAddressToString,
} from "../../../src/core/membership/unique-address.js";
import { withMarks } from "./reachability-marks.js";

const n = (host: string) => nodeOf("shardkit", "sys", host, 2552, 1);
const [a, b, c, d] = [n("a"), n("b"), n("c"), n("d")] as const;
const m = (
  node: UniqueAddress,
  status: MemberStatus,
  opts: { roles?: string[]; dataCenter?: string } = {},
) => memberFrom({ uniqueAddress: node, status, upNumber: 1, ...opts });
const view = (g: Gossip, self: UniqueAddress = a, selfDc?: string): MembershipState =>
  membershipStateOf({ latestGossip: g, selfUniqueAddress: self, selfDc });
const summary = (events: readonly ClusterEvent[]) =>
  events.map((e) => {
    switch (e.type) {
      case "leader-changed":
        return `${e.type} ${e.leader?.address.host}`;
      case "role-leader-changed":
        return `${e.type} ${e.role} ${e.leader?.address.host}`;
      case "member-removed":
        return `${e.type} ${e.member.uniqueAddress.address.host} ${e.member.status} (was ${e.previousStatus})`;
      default:
        return `${e.type} ${e.member.uniqueAddress.address.host}`;
    }
  });

describe("cluster events", () => {
  it("one event type per status a member reaches, in member order", () => {
    const statuses: [MemberStatus, string][] = [
      ["joining", "member-joined"],
      ["weakly-up", "member-weakly-up"],
      ["up", "member-up"],
      ["preparing-for-shutdown", "member-preparing-for-shutdown"],
      ["ready-for-shutdown", "member-ready-for-shutdown"],
      ["leaving", "member-left"],
      ["exiting", "member-exited"],
      ["down", "member-downed"],
    ];
    const nodes = statuses.map((_, i) => n(`h${i}`));
    const before = view(gossipOf({}), a);
    const after = view(gossipOf({ members: statuses.map(([s], i) => m(nodes[i]!, s)) }), a);
    expect(diffMemberEvents(before, after).map((e) => [e.type, e.member.status])).toEqual(
      statuses.map(([s, type]) => [type, s]),
    );
  });

  it("reports status changes, then removals, then reachability, then leader and role leaders", () => {
    const before = view(
      gossipOf({
        members: [
          m(a, "up", { roles: ["y"] }),
          m(b, "up", { roles: ["x"] }),
          m(c, "leaving"),
          m(d, "up"),
        ],
      }),
      d,
    );
    const reach = markUnreachable(emptyReachability, d, c);
    const after = view(
      gossipOf({
        members: [m(b, "leaving", { roles: ["x"] }), m(c, "exiting"), m(d, "up")],
        reachability: reach,
      }),
      d,
    );
    expect(summary(diffClusterEvents(before, after))).toEqual([
      "member-left b",
      "member-exited c",
      "member-removed a removed (was up)",
      "unreachable-member c",
      "leader-changed b",
      "role-leader-changed y undefined",
    ]);
  });

  it("removals come in member order after every status change", () => {
    const before = view(gossipOf({ members: [m(a, "up"), m(b, "exiting"), m(c, "down")] }));
    const after = view(gossipOf({ members: [m(a, "leaving")] }));
    expect(summary(diffMemberEvents(before, after))).toEqual([
      "member-left a",
      "member-removed b removed (was exiting)",
      "member-removed c removed (was down)",
    ]);
    const added = view(gossipOf({ members: [m(a, "up"), m(b, "exiting"), m(d, "joining")] }));
    expect(summary(diffMemberEvents(added, before))).toEqual([
      "member-downed c",
      "member-removed d removed (was joining)",
    ]);
  });

  it("reports nothing for an unchanged view, a new seen set or a new version", () => {
    const g = gossipOf({ members: [m(a, "up"), m(b, "up")], seen: [a] });
    expect(diffClusterEvents(view(g), view(g))).toEqual([]);
    expect(diffClusterEvents(view(g), view(withSeen(g, b)))).toEqual([]);
    expect(diffClusterEvents(view(g), view(incrementVersion(g, "x")))).toEqual([]);
    // equal members in new objects and a new, equally empty table: no event either
    const copy = gossipOf({
      members: [m(a, "up"), m(b, "up")],
      reachability: markReachable(emptyReachability, a, b),
    });
    expect(diffClusterEvents(view(g), view(copy))).toEqual([]);
  });

  it("the diff is taken even when only one side has reachability rows", () => {
    const g = gossipOf({ members: [m(a, "up"), m(b, "up"), m(c, "up")] });
    const unreachable = withReachability(g, markUnreachable(emptyReachability, a, b));
    expect(summary(diffClusterEvents(view(g), view(unreachable)))).toEqual([
      "unreachable-member b",
    ]);
    expect(summary(diffClusterEvents(view(unreachable), view(g)))).toEqual(["reachable-member b"]);
    // a changed table with rows on both sides is diffed too
    const alsoC = withReachability(
      unreachable,
      markUnreachable(unreachable.overview.reachability, a, c),
    );
    expect(summary(diffClusterEvents(view(unreachable), view(alsoC)))).toEqual([
      "unreachable-member c",
    ]);
  });

  it("a view of another node or data center over the same members is diffed", () => {
    // two gossips sharing the member objects and the table: only the views differ
    const members = [m(a, "up"), m(b, "up")];
    const r = markUnreachable(emptyReachability, a, b);
    const g = gossipOf({ members, reachability: r });
    const g2 = gossipOf({ members, reachability: r });
    // from b, b itself is excluded; from a it is unreachable
    expect(summary(diffReachabilityEvents(view(g, b), view(g2, a)))).toEqual([
      "unreachable-member b",
    ]);
    expect(summary(diffClusterEvents(view(g, b), view(g2, a)))).toEqual(["unreachable-member b"]);
    expect(summary(diffClusterEvents(view(g, a), view(g2, a, "dc2")))).toEqual([
      "reachable-member b",
      "leader-changed undefined",
    ]);
    expect(diffClusterEvents(view(g, a), view(g2, a))).toEqual([]);
  });

  it("self and nodes of other data centers are no reachability subjects; terminated counts", () => {
    const g = gossipOf({
      members: [m(a, "up"), m(b, "up"), m(c, "up", { dataCenter: "dc2" }), m(d, "up")],
    });
    let r: Reachability = markUnreachable(emptyReachability, b, a);
    r = markUnreachable(r, a, c);
    r = markTerminated(r, a, d);
    expect(summary(diffReachabilityEvents(view(g), view(withReachability(g, r))))).toEqual([
      "unreachable-member d",
    ]);
  });

  it("role leaders are reported for the roles of both views, sorted", () => {
    const before = view(gossipOf({ members: [m(a, "up", { roles: ["z"] }), m(b, "up")] }));
    const after = view(
      gossipOf({ members: [m(a, "up"), m(b, "up", { roles: ["y", "x"] }), m(c, "joining")] }),
    );
    expect(summary(diffClusterEvents(before, after))).toEqual([
      "member-joined c",
      "role-leader-changed x b",
      "role-leader-changed y b",
      "role-leader-changed z undefined",
    ]);
  });

  it("reachability events: the members whose in-DC unreachability (self excluded) differs, in member order", () => {
    // the rule as sets of node strings, walked over the members (the events' definition)
    const unreachableKeys = (s: MembershipState) =>
      new Set(
        allUnreachableOrTerminated(dcReachabilityNoOutsideNodes(s))
          .map(uniqueAddressToString)
          .filter((k) => k !== uniqueAddressToString(s.selfUniqueAddress)),
      );
    const expected = (before: MembershipState, after: MembershipState) => {
      const was = unreachableKeys(before);
      const now = unreachableKeys(after);
      return after.latestGossip.members.flatMap((x) => {
        const k = uniqueAddressToString(x.uniqueAddress);
        if (now.has(k) && !was.has(k))
          return [`unreachable-member ${x.uniqueAddress.address.host}`];
        if (!now.has(k) && was.has(k)) return [`reachable-member ${x.uniqueAddress.address.host}`];
        return [];
      });
    };
    const nodes = ["a", "b", "c", "d", "e", "f", "g"].map(n);
    const table = fc.array(
      fc.tuple(fc.nat(6), fc.nat(6), fc.constantFrom("unreachable", "terminated", "reachable")),
      { maxLength: 10 },
    );
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom("default", "dc2"), { minLength: 7, maxLength: 7 }),
        table,
        table,
        fc.nat(6),
        fc.nat(6),
        (dcs, marks1, marks2, self1, self2) => {
          const members = nodes.map((x, i) => m(x, "up", { dataCenter: dcs[i] }));
          const tableOf = (marks: typeof marks1) => withMarks(emptyReachability, nodes, marks);
          const g1 = gossipOf({ members, reachability: tableOf(marks1) });
          const g2 = gossipOf({ members, reachability: tableOf(marks2) });
          const selfOf = (i: number) => nodes[i] as UniqueAddress;
          for (const [before, after] of [
            [view(g1, selfOf(self1), dcs[self1]), view(g2, selfOf(self2), dcs[self2])],
            [view(g1, selfOf(self1)), view(g1, selfOf(self2))],
            [view(g1, selfOf(self1), "dc2"), view(g2, selfOf(self1), "dc2")],
          ] as const)
            expect(summary(diffReachabilityEvents(before, after))).toEqual(expected(before, after));
        },
      ),
      { numRuns: 500 },
    );
  });
});
