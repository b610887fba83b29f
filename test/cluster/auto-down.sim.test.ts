/**
 * Auto-down (docs/cluster.md, "Auto-down"), opt-in: the leader downs a member that has
 * been unreachable for autoDown.afterMs. The tracker's rules as unit tests, then the
 * consequence the docs warn about, in the simulator: a partition splits the cluster into
 * islands, each side downing the other and carrying on alone.
 */
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/base/errors.js";
import { AutoDownTracker } from "../../src/core/downing/auto-down.js";
import { resolveSbrSettings } from "../../src/core/downing/sbr-settings.js";
import type { Member } from "../../src/core/membership/member.js";
import { simSeeds } from "../support/sim-seeds.js";
import { SimClusterHarness } from "./sim-cluster.js";

const member = (host: string, status: Member["status"] = "up", uid = 1): Member =>
  ({
    uniqueAddress: { address: { protocol: "shardkit", system: "s", host, port: 2552 }, uid },
    status,
    roles: [],
    upNumber: 1,
    appVersion: "1.0.0",
  }) as unknown as Member;

describe("AutoDownTracker", () => {
  it("downs a member only after afterMs of continuous unreachability, in address order", () => {
    const t = new AutoDownTracker();
    t.observe([member("c"), member("b")], 1_000);
    expect(t.due(5_999, 5_000)).toEqual([]);
    expect(t.due(6_000, 5_000).map((m) => m.uniqueAddress.address.host)).toEqual(["b", "c"]);
  });

  it("restarts the wait of a member that came back, and skips members already down", () => {
    const t = new AutoDownTracker();
    t.observe([member("b")], 0);
    t.observe([], 3_000);
    t.observe([member("b")], 4_000);
    expect(t.due(8_000, 5_000)).toEqual([]);
    expect(t.due(9_000, 5_000)).toHaveLength(1);
    t.observe([member("b", "down")], 9_500);
    expect(t.due(20_000, 5_000)).toEqual([]);
    expect(t.unreachableForMs(member("b"), 10_000)).toBe(6_000);
    expect(t.unreachableForMs(member("x"), 10_000)).toBeUndefined();
  });

  it("a new incarnation (another uid) is another member", () => {
    const t = new AutoDownTracker();
    t.observe([member("b", "up", 1)], 0);
    t.observe([member("b", "up", 2)], 4_000);
    expect(t.due(6_000, 5_000)).toEqual([]);
  });

  it("is opt-in: not the default, afterMs validated", () => {
    expect(resolveSbrSettings().activeStrategy).toBe("keep-majority");
    expect(resolveSbrSettings({ activeStrategy: "auto-down" }).autoDown.afterMs).toBe(10_000);
    expect(() =>
      resolveSbrSettings({ activeStrategy: "auto-down", autoDown: { afterMs: 0 } }),
    ).toThrow(ConfigError);
  });
});

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
