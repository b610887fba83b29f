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
});
