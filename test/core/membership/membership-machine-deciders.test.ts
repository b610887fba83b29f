/**
 * Only the leader of a side runs the split brain resolver's decision
 * (src/core/membership/membership-machine.ts, downingTick and isLeaderAmongReachable):
 * a member that notices an unreachable node first, because it alone monitors it, does not
 * decide before the leader learns of it.
 */
import { describe, expect, it } from "vitest";
import { MembershipWorld } from "./membership-world.js";

describe("membership machine: who decides", () => {
  it("the monitor of a crashed node waits for the leader's decision", () => {
    const w = new MembershipWorld({
      seeds: ["a"],
      // one monitor per node: c alone watches e, so c sees e unreachable before a does
      settings: { monitoredByNrOfMembers: 1 },
      downing: { stableAfterMs: 5000, activeStrategy: "keep-majority" },
    });
    w.formCluster(["a", "b", "c", "d", "e"]);
    w.partition(["a", "b", "c", "d"], ["e"]);
    const start = w.trace.length;
    w.run(30_000);
    const lines = w.trace.slice(start);
    const noticed = lines.filter((l) => l.endsWith("unreachable-member e"));
    expect(noticed[0]).toBe("c: unreachable-member e");
    const decisions = lines.filter((l) => / DOWN /.test(l) && !l.startsWith("e: "));
    expect(decisions).toEqual([
      "a: DOWN e (keep-majority: majority: 4 reachable vs 1 unreachable members)",
    ]);
  });

  it("a member that others see unreachable (a flaky link) does not decide beside the leader", () => {
    const w = new MembershipWorld({
      seeds: ["a"],
      downing: { stableAfterMs: 5000, activeStrategy: "keep-majority" },
    });
    w.formCluster(["a", "b", "c", "d", "e"]);
    // only the link b - e breaks: b and e see each other unreachable, everyone else sees
    // both; b is the first of the unreachable members in member order
    w.partition(["b"], ["e"]);
    const start = w.trace.length;
    w.run(30_000);
    const deciders = new Set(
      w.trace
        .slice(start)
        .filter((l) => / DOWN /.test(l))
        .map((l) => l.slice(0, l.indexOf(":"))),
    );
    expect([...deciders]).toEqual(["a"]);
  });

  it("a weakly-up member first in member order does not decide beside the leader", () => {
    const w = new MembershipWorld({
      seeds: ["a"],
      settings: { allowWeaklyUpMembersMs: 1000 },
      downing: { stableAfterMs: 20_000, activeStrategy: "keep-majority" },
    });
    w.formCluster(["a", "b", "c", "d", "e"]);
    w.partition(["a", "b", "c", "d"], ["e"]);
    w.run(5000);
    // "0" sorts before every other member; with e unreachable there is no convergence, so
    // it stays weakly up: the first reachable member in order, but neither up nor leaving
    w.add("0");
    w.feed("0", { type: "start" });
    w.runUntil(() => w.statusOf("0", "0") === "weakly-up", 15_000);
    expect(w.statusOf("0", "0")).toBe("weakly-up");
    const start = w.trace.length;
    w.run(30_000);
    const lines = w.trace.slice(start);
    expect(lines.filter((l) => l.startsWith("0: ") && /DOWN|not downing/.test(l))).toEqual([]);
    expect(lines.filter((l) => / DOWN /.test(l) && !l.startsWith("e: "))).toEqual([
      "a: DOWN e (keep-majority: majority: 4 reachable vs 1 unreachable members)",
    ]);
  });
});
