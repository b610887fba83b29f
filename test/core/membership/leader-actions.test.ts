/** Leader actions beyond the scripts: event payloads and a leader that removes itself. */
import { describe, expect, it } from "vitest";
import { gossipOf, hasTombstone } from "../../../src/core/membership/gossip.js";
import {
  isMinNrOfMembersFulfilled,
  leaderActions,
} from "../../../src/core/membership/leader-actions.js";
import { memberFrom } from "../../../src/core/membership/member.js";
import { membershipStateOf } from "../../../src/core/membership/membership-state.js";
import { nodeOf } from "../../../src/core/membership/unique-address.js";

const n = (host: string) => nodeOf("shardkit", "sys", host, 2552, 1);
const [a, b] = [n("a"), n("b")] as const;
const input = {
  minNrOfMembers: 1,
  allowWeaklyUp: false,
  weaklyUpDelayElapsed: false,
  nowMs: 42,
};

describe("leader actions", () => {
  it("reports the changed members in the events", () => {
    const g = gossipOf({
      members: [memberFrom({ uniqueAddress: a, status: "joining", roles: ["x"] })],
      seen: [a],
    });
    const r = leaderActions(membershipStateOf({ latestGossip: g, selfUniqueAddress: a }), input);
    if (r.type !== "changed") throw new Error(r.reason);
    expect(r.path).toBe("convergence");
    const [e] = r.events;
    expect(e?.type).toBe("member-up");
    if (e?.type !== "member-up") return;
    expect([e.member.status, e.member.upNumber, e.member.roles]).toEqual(["up", 1, ["x"]]);
  });

  it("lets the last, exiting member remove itself without breaking the gossip", () => {
    const g = gossipOf({
      members: [memberFrom({ uniqueAddress: a, status: "exiting", upNumber: 1 })],
      seen: [a],
    });
    const r = leaderActions(membershipStateOf({ latestGossip: g, selfUniqueAddress: a }), input);
    if (r.type !== "changed") throw new Error(r.reason);
    expect(r.state.latestGossip.members).toEqual([]);
    expect(r.state.latestGossip.overview.seen).toEqual([]);
    expect(hasTombstone(r.state.latestGossip, a)).toBe(true);
    expect(r.state.latestGossip.tombstones[0]?.removedAtMs).toBe(42);
  });

  it("moves members up in batches of maxMembersUpPerRound, in member order (boot storms)", () => {
    const joiners = ["b", "c", "d", "e", "f"].map(n);
    const all = [a, ...joiners];
    const g = gossipOf({
      members: [
        memberFrom({ uniqueAddress: a, status: "up", upNumber: 1 }),
        ...joiners.map((j) => memberFrom({ uniqueAddress: j, status: "joining" })),
      ],
      seen: all,
    });
    const s = membershipStateOf({ latestGossip: g, selfUniqueAddress: a });
    const r = leaderActions(s, { ...input, maxMembersUpPerRound: 2 });
    if (r.type !== "changed") throw new Error(r.reason);
    const up = r.state.latestGossip.members.filter((m) => m.status === "up");
    expect(up.map((m) => [m.uniqueAddress.address.host, m.upNumber])).toEqual([
      ["a", 1],
      ["b", 2],
      ["c", 3],
    ]);
    const unbounded = leaderActions(s, { ...input, maxMembersUpPerRound: 0 });
    if (unbounded.type !== "changed") throw new Error(unbounded.reason);
    expect(unbounded.state.latestGossip.members.every((m) => m.status === "up")).toBe(true);
  });

  it("counts members per role for the minimum", () => {
    const g = gossipOf({
      members: [
        memberFrom({ uniqueAddress: a, status: "joining", roles: ["r"] }),
        memberFrom({ uniqueAddress: b, status: "up", upNumber: 1 }),
      ],
    });
    const s = membershipStateOf({ latestGossip: g, selfUniqueAddress: a });
    expect(isMinNrOfMembersFulfilled(s, 2, { r: 1 })).toBe(true);
    expect(isMinNrOfMembersFulfilled(s, 3)).toBe(false);
    expect(isMinNrOfMembersFulfilled(s, 1, { r: 2 })).toBe(false);
  });
});
