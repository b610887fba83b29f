/**
 * What a leader's actions reach (src/core/membership/leader-actions.ts): only members of
 * its own data center are moved up, to exiting or weakly-up, or removed, whatever another
 * data center's members look like; and the exiting nodes that confirmed count for the
 * convergence the actions wait for.
 */
import { describe, expect, it } from "vitest";
import { gossipOf, withReachability } from "../../../src/core/membership/gossip.js";
import { leaderActions } from "../../../src/core/membership/leader-actions.js";
import { memberFrom } from "../../../src/core/membership/member.js";
import type { MemberStatus } from "../../../src/core/membership/member-status.js";
import { membershipStateOf } from "../../../src/core/membership/membership-state.js";
import { emptyReachability, markUnreachable } from "../../../src/core/membership/reachability.js";
import { nodeOf, type UniqueAddress } from "../../../src/core/membership/unique-address.js";

const n = (host: string) => nodeOf("shardkit", "sys", host, 2552, 1);
const [a, b, c, d, e, f] = ["a", "b", "c", "d", "e", "f"].map(n) as [
  UniqueAddress,
  UniqueAddress,
  UniqueAddress,
  UniqueAddress,
  UniqueAddress,
  UniqueAddress,
];
const m = (node: UniqueAddress, status: MemberStatus, dataCenter = "default") =>
  memberFrom({
    uniqueAddress: node,
    status,
    dataCenter,
    upNumber: status === "joining" ? undefined : 1,
  });
const input = { minNrOfMembers: 1, allowWeaklyUp: true, weaklyUpDelayElapsed: true, nowMs: 7 };
const statuses = (g: { members: readonly { uniqueAddress: UniqueAddress; status: string }[] }) =>
  g.members.map((x) => `${x.uniqueAddress.address.host}=${x.status}`).join(" ");

describe("leader actions: scope", () => {
  it("on convergence acts on its own data center's members only", () => {
    const g = withReachability(
      gossipOf({
        members: [
          m(a, "up"),
          m(b, "down", "dc2"),
          m(c, "up", "dc2"),
          m(d, "joining", "dc2"),
          m(e, "leaving", "dc2"),
          m(f, "joining"),
        ],
        seen: [a],
      }),
      markUnreachable(emptyReachability, a, b),
    );
    const r = leaderActions(membershipStateOf({ latestGossip: g, selfUniqueAddress: a }), input);
    if (r.type !== "changed") throw new Error(r.reason);
    expect(r.path).toBe("convergence");
    expect(statuses(r.state.latestGossip)).toBe("a=up b=down c=up d=joining e=leaving f=up");
  });

  it("without convergence moves only its own data center's joiners to weakly-up", () => {
    const g = gossipOf({
      members: [m(a, "up"), m(b, "up"), m(c, "joining", "dc2"), m(f, "joining")],
      seen: [a], // b has not seen it: no convergence
    });
    const r = leaderActions(membershipStateOf({ latestGossip: g, selfUniqueAddress: a }), input);
    if (r.type !== "changed") throw new Error(r.reason);
    expect(r.path).toBe("weakly-up");
    expect(statuses(r.state.latestGossip)).toBe("a=up b=up c=joining f=weakly-up");
  });

  it("a confirmed exiting node counts as having seen the gossip", () => {
    // b has not seen the gossip but confirmed: convergence, so c moves up
    const g = gossipOf({ members: [m(a, "up"), m(b, "up"), m(c, "joining")], seen: [a] });
    const s = membershipStateOf({ latestGossip: g, selfUniqueAddress: a });
    const without = leaderActions(s, { ...input, allowWeaklyUp: false });
    expect(without).toEqual({ type: "none", reason: "no-convergence" });
    const r = leaderActions(s, { ...input, allowWeaklyUp: false, exitingConfirmed: [b] });
    if (r.type !== "changed") throw new Error(r.reason);
    expect(statuses(r.state.latestGossip)).toBe("a=up b=up c=up");
  });

  it("moves at most maxMembersUpPerRound joiners to weakly-up per run, in member order", () => {
    const g = gossipOf({
      members: [m(a, "up"), m(b, "up"), m(e, "joining"), m(c, "joining"), m(d, "joining")],
      seen: [a],
    });
    const s = membershipStateOf({ latestGossip: g, selfUniqueAddress: a });
    const r = leaderActions(s, { ...input, maxMembersUpPerRound: 2 });
    if (r.type !== "changed") throw new Error(r.reason);
    expect(r.path).toBe("weakly-up");
    expect(statuses(r.state.latestGossip)).toBe("a=up b=up c=weakly-up d=weakly-up e=joining");
  });
});
