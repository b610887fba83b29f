/**
 * The roles of the membership machine's configuration reach the gossip: the first seed's
 * self-join and a Join sent to a seed carry them (src/core/membership/membership-machine.ts,
 * joinSelf and sendJoin), so that every member sees each node's roles.
 */
import { describe, expect, it } from "vitest";
import { MembershipWorld } from "./membership-world.js";

describe("membership machine: roles", () => {
  it("a self-joined seed and a node joining through it carry their configured roles", () => {
    const w = new MembershipWorld({ seeds: ["a"], roles: { a: ["x"], b: ["z", "y"] } });
    w.formCluster(["a", "b", "c"]);
    for (const observer of ["a", "b", "c"]) {
      const roles = w
        .machine(observer)
        .state.latestGossip.members.map((m) => `${m.uniqueAddress.address.host}:${m.roles}`);
      expect(roles, observer).toEqual(["a:x", "b:y,z", "c:"]);
    }
  });

  it("a node that forms a cluster by the join command to itself carries its roles", () => {
    const w = new MembershipWorld({ roles: { a: ["r"] } });
    w.add("a");
    w.feed("a", { type: "join", to: w.uniqueAddressOf("a").address });
    expect(w.machine("a").state.latestGossip.members.map((m) => m.roles)).toEqual([["r"]]);
    expect(w.view("a")).toBe("a=up");
  });
});
