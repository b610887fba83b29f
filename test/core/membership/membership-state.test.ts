/**
 * The membership view beyond the reference vectors: leader fallback order, role leader,
 * gossip target validity, convergence blocked by unreachable or terminated nodes,
 * youngest/oldest on edge cases, and the defaults of the view.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AssertionError } from "../../../src/base/assert.js";
import { emptyGossip, gossipOf, withSeen } from "../../../src/core/membership/gossip.js";
import { memberFrom } from "../../../src/core/membership/member.js";
import { MEMBER_STATUSES, type MemberStatus } from "../../../src/core/membership/member-status.js";
import {
  ageSortedTopOldestMembersPerDc,
  convergence,
  dcMembers,
  dcReachabilityNoOutsideNodes,
  dcReachabilityWithoutObservationsWithin,
  gossipTargetsForExitingMembers,
  isInSameDc,
  isLeader,
  leader,
  leaderOf,
  markSeenBySelf,
  membershipStateOf,
  roleLeader,
  selfMember,
  validNodeForGossip,
  youngestMember,
} from "../../../src/core/membership/membership-state.js";
import {
  emptyReachability,
  markTerminated,
  markUnreachable,
} from "../../../src/core/membership/reachability.js";
import { nodeOf, type UniqueAddress } from "../../../src/core/membership/unique-address.js";

const n = (host: string) => nodeOf("shardkit", "sys", host, 2552, 1);
const [a, b, c, d] = [n("a"), n("b"), n("c"), n("d")] as const;
const m = (
  node: UniqueAddress,
  status: MemberStatus,
  opts: { roles?: string[]; upNumber?: number; dataCenter?: string } = {},
) => memberFrom({ uniqueAddress: node, status, ...opts });
const host = (x: UniqueAddress | undefined) => x?.address.host;

describe("membership state", () => {
  it("defaults to the default data center and 5 cross-DC connections", () => {
    const s = membershipStateOf({ latestGossip: emptyGossip, selfUniqueAddress: a });
    expect([s.selfDc, s.crossDcConnections]).toEqual(["default", 5]);
    expect(selfMember(s)).toBeUndefined();
    expect(leader(s)).toBeUndefined();
    expect(youngestMember(s)).toBeUndefined();
    expect(() =>
      membershipStateOf({ latestGossip: emptyGossip, selfUniqueAddress: a, crossDcConnections: 0 }),
    ).toThrow(AssertionError);
  });

  it("falls back to leader-status order when no member may lead", () => {
    const g = gossipOf({ members: [m(a, "exiting"), m(b, "joining"), m(c, "weakly-up")] });
    const s = membershipStateOf({ latestGossip: g, selfUniqueAddress: a });
    expect(host(leader(s))).toBe("c"); // weakly-up before joining before exiting
    expect(isLeader(s, c)).toBe(true);
    expect(isLeader(s, a)).toBe(false);
  });

  it("prefers the first member that may lead, skipping unreachable ones except self", () => {
    const r = markUnreachable(emptyReachability, c, a);
    const g = gossipOf({ members: [m(a, "up"), m(b, "leaving"), m(c, "up")], reachability: r });
    expect(host(leader(membershipStateOf({ latestGossip: g, selfUniqueAddress: c })))).toBe("b");
    expect(host(leader(membershipStateOf({ latestGossip: g, selfUniqueAddress: a })))).toBe("a");
  });

  it("the leader of candidates in any order is the leader of the same candidates in member order", () => {
    const g = gossipOf({
      members: [m(a, "joining"), m(b, "up"), m(c, "leaving"), m(d, "up")],
      reachability: markUnreachable(emptyReachability, c, b),
    });
    const s = membershipStateOf({ latestGossip: g, selfUniqueAddress: c });
    expect(host(leaderOf(s, g.members))).toBe("c"); // b unreachable, c leaving may lead
    expect(host(leaderOf(s, [...g.members].reverse()))).toBe("c");
    expect(
      host(
        leaderOf(
          s,
          [g.members[3], g.members[0]].filter((x) => x !== undefined),
        ),
      ),
    ).toBe("d");
    expect(
      host(
        leaderOf(
          s,
          [g.members[0]].filter((x) => x !== undefined),
        ),
      ),
    ).toBe("a");
  });

  it("chooses a role leader among members with the role", () => {
    const g = gossipOf({
      members: [m(a, "up"), m(b, "joining", { roles: ["r"] }), m(c, "up", { roles: ["r"] })],
    });
    const s = membershipStateOf({ latestGossip: g, selfUniqueAddress: a });
    expect(host(roleLeader(s, "r"))).toBe("c");
    expect(roleLeader(s, "none")).toBeUndefined();
  });

  it("never gossips to self or to a member some non-down observer sees as unreachable", () => {
    const r = markUnreachable(markUnreachable(emptyReachability, a, b), c, d);
    const g = gossipOf({
      members: [m(a, "up"), m(b, "up"), m(c, "up"), m(d, "up")],
      reachability: r,
    });
    const s = membershipStateOf({ latestGossip: g, selfUniqueAddress: a });
    // b: self observes it; d: c does (before Akka 2.6's rule, d was still a target)
    expect([a, b, c, d].map((x) => validNodeForGossip(s, x))).toEqual([false, false, true, false]);
    // the observation of a down observer does not count
    const downC = gossipOf({
      members: [m(a, "up"), m(b, "up"), m(c, "down"), m(d, "up")],
      reachability: r,
    });
    const t = membershipStateOf({ latestGossip: downC, selfUniqueAddress: a });
    expect([a, b, c, d].map((x) => validNodeForGossip(t, x))).toEqual([false, false, true, true]);
  });

  it("blocks convergence on an unreachable up member and on a terminated non-member", () => {
    const members = [m(a, "up"), m(b, "up"), m(c, "exiting")];
    const seen = [a, b, c];
    const unreachableB = gossipOf({
      members,
      seen,
      reachability: markUnreachable(emptyReachability, a, b),
    });
    expect(
      convergence(membershipStateOf({ latestGossip: unreachableB, selfUniqueAddress: c })),
    ).toBe(false);
    expect(
      convergence(membershipStateOf({ latestGossip: unreachableB, selfUniqueAddress: b })),
    ).toBe(true);
    const exitingGone = gossipOf({
      members,
      seen,
      reachability: markTerminated(emptyReachability, a, c),
    });
    expect(
      convergence(membershipStateOf({ latestGossip: exitingGone, selfUniqueAddress: a })),
    ).toBe(true);
    const notSeen = gossipOf({ members: [m(a, "up"), m(b, "leaving")], seen: [a] });
    const s = membershipStateOf({ latestGossip: notSeen, selfUniqueAddress: a });
    expect(convergence(s)).toBe(false);
    expect(convergence(s, [b])).toBe(true);
    expect(
      convergence(
        markSeenBySelf(
          membershipStateOf({ latestGossip: withSeen(notSeen, b), selfUniqueAddress: a }),
        ),
      ),
    ).toBe(true);
  });

  it("scopes data-center views", () => {
    const r = markUnreachable(markUnreachable(emptyReachability, a, c), c, b);
    const g = gossipOf({
      members: [m(a, "up"), m(b, "up"), m(c, "up", { dataCenter: "dc2" })],
      reachability: r,
    });
    const s = membershipStateOf({ latestGossip: g, selfUniqueAddress: a });
    expect(dcMembers(s).map((x) => host(x.uniqueAddress))).toEqual(["a", "b"]);
    expect(isInSameDc(s, b)).toBe(true);
    expect(isInSameDc(s, c)).toBe(false);
    expect(isInSameDc(s, d)).toBe(false);
    expect(dcReachabilityNoOutsideNodes(s).records).toEqual([]);
    expect(dcReachabilityWithoutObservationsWithin(s).records.map((x) => host(x.subject))).toEqual([
      "c",
    ]);
  });

  it("ranks ages: unassigned up-numbers are youngest-as-zero, oldest per DC capped", () => {
    const g = gossipOf({
      members: [
        m(a, "up", { upNumber: 2 }),
        m(b, "joining"),
        m(c, "up", { upNumber: 1 }),
        m(d, "up", { upNumber: 3, dataCenter: "dc2" }),
      ],
    });
    const s = membershipStateOf({ latestGossip: g, selfUniqueAddress: a, crossDcConnections: 1 });
    expect(host(youngestMember(s)?.uniqueAddress)).toBe("a");
    const perDc = ageSortedTopOldestMembersPerDc(s);
    expect([...perDc].map(([dc, ms]) => [dc, ms.map((x) => host(x.uniqueAddress))])).toEqual([
      ["dc2", ["d"]],
      ["default", ["c"]],
    ]);
    expect(gossipTargetsForExitingMembers(s, [])).toEqual([]);
  });
});

describe("leader over one member list and successive reachability tables", () => {
  const [a, b, c, d] = ["a", "b", "c", "d"].map((h) => nodeOf("shardkit", "sys", h, 2552, 1)) as [
    UniqueAddress,
    UniqueAddress,
    UniqueAddress,
    UniqueAddress,
  ];
  const up = (u: UniqueAddress) => memberFrom({ uniqueAddress: u, status: "up", upNumber: 1 });
  const members = gossipOf({ members: [up(a), up(b), up(c), up(d)] }).members;
  const leaderWith = (r: ReturnType<typeof markUnreachable>, self = d) =>
    leader(
      membershipStateOf({
        latestGossip: gossipOf({ members, reachability: r }),
        selfUniqueAddress: self,
      }),
    )?.address.host;

  it("follows which members are unreachable, whoever observes them", () => {
    expect(leaderWith(emptyReachability)).toBe("a");
    expect(leaderWith(markUnreachable(emptyReachability, b, a))).toBe("b");
    // another table (another observer) with the same unreachable member: the same leader
    expect(leaderWith(markUnreachable(emptyReachability, c, a))).toBe("b");
    expect(leaderWith(markUnreachable(markUnreachable(emptyReachability, c, a), d, b))).toBe("c");
    expect(leaderWith(markUnreachable(emptyReachability, c, d))).toBe("a");
    // self counts even when unreachable
    expect(leaderWith(markUnreachable(emptyReachability, c, a), a)).toBe("a");
  });

  it("the leader of a view (an early-exit scan in member order) is leaderOf the members in any order", () => {
    // leader() scans the gossip's members in member order and stops at the first that may
    // lead; leaderOf of a reversed copy sorts: both must name the same node, and role
    // leaders the leader of the role's members
    const nodes = ["a", "b", "c", "d", "e", "f"].map(n);
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            status: fc.constantFrom(...MEMBER_STATUSES.filter((x) => x !== "removed")),
            dc: fc.constantFrom("default", "other"),
            role: fc.boolean(),
          }),
          { minLength: 1, maxLength: nodes.length },
        ),
        fc.array(fc.tuple(fc.nat(nodes.length - 1), fc.nat(nodes.length - 1), fc.boolean()), {
          maxLength: 6,
        }),
        fc.nat(nodes.length - 1),
        (specs, marks, selfAt) => {
          const members = specs.map((x, i) =>
            m(nodes[i] as UniqueAddress, x.status, {
              dataCenter: x.dc,
              roles: x.role ? ["r"] : [],
            }),
          );
          let r = emptyReachability;
          for (const [o, sub, terminated] of marks) {
            if (o >= members.length || sub >= members.length || o === sub) continue;
            const [obs, subj] = [nodes[o] as UniqueAddress, nodes[sub] as UniqueAddress];
            r = terminated ? markTerminated(r, obs, subj) : markUnreachable(r, obs, subj);
          }
          const g = gossipOf({ members, reachability: r });
          const self = nodes[Math.min(selfAt, members.length - 1)] as UniqueAddress;
          const s = membershipStateOf({ latestGossip: g, selfUniqueAddress: self });
          const shuffled = [...g.members].reverse();
          expect(leader(s)).toEqual(leaderOf(s, shuffled));
          expect(roleLeader(s, "r")).toEqual(
            leaderOf(
              s,
              shuffled.filter((x) => x.roles.includes("r")),
            ),
          );
        },
      ),
      { numRuns: 300 },
    );
  });
});
