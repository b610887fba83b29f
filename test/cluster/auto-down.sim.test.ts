/**
 * Auto-down (docs/cluster.md, "Auto-down"), opt-in: the leader downs a member that has
 * been unreachable for autoDown.afterMs. The tracker's rules are unit tests
 * (test/core/downing/auto-down.test.ts); here the consequence the docs warn about, in the
 * simulator: a partition splits the cluster into islands, each side downing the other and
 * carrying on alone.
 */
import { describe, expect, it } from "vitest";
import { simSeeds } from "../support/sim-seeds.js";
import { SimClusterHarness } from "./sim-cluster.js";

describe.each(simSeeds([1, 2, 3]))("auto-down in the simulator (seed %i)", (seed) => {
  it("a 3|2 partition forms two islands: each side downs the other and goes on", async () => {
    const warnings: string[] = [];
    const h = new SimClusterHarness(seed, {
      logLevel: "warn",
      write: (line) => {
        if (line.includes("AUTO-DOWN IS ON")) warnings.push(line);
      },
    });
    const names = ["a", "b", "c", "d", "e"];
    for (const n of names)
      await h.member(n, {
        seedNodes: ["a:2552", "b:2552", "c:2552"],
        downing: { activeStrategy: "auto-down", autoDown: { afterMs: 3_000 } },
      });
    // Every member says loudly what auto-down does under a partition.
    expect(warnings).toHaveLength(5);
    expect(warnings[0]).toMatch(/islands/);
    const sees = (n: string, others: string[]) => {
      const ms = h.members.get(n)?.cluster.state.members ?? [];
      return (
        ms.length === others.length &&
        ms.every((m) => m.status === "up" && others.includes(m.uniqueAddress.address.host))
      );
    };
    await h.until(() => names.every((n) => sees(n, names)), 60_000);
    h.network.partition(["a", "b", "c"], ["d", "e"]);
    const major = ["a", "b", "c"];
    const minor = ["d", "e"];
    await h.until(
      () => major.every((n) => sees(n, major)) && minor.every((n) => sees(n, minor)),
      60_000,
    );
    // Islands: nobody removed itself; each side is a cluster of its own with a leader.
    for (const n of names) expect(h.members.get(n)?.removedReason).toBeUndefined();
    expect(h.members.get("d")?.cluster.state.leader?.address.host).toBe("d");
    expect(h.members.get("a")?.cluster.state.leader?.address.host).toBe("a");
    // counted as auto-down decisions of each island's leader, not as resolver decisions
    expect(h.members.get("a")?.cluster.downingDecisions.of("auto-down")).toBeGreaterThan(0);
    expect(h.members.get("d")?.cluster.downingDecisions.of("auto-down")).toBeGreaterThan(0);
    expect(h.members.get("a")?.cluster.downingDecisions.of("down-unreachable")).toBe(0);
  });
});
