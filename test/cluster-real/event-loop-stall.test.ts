/**
 * Issue 21, real processes: a member blocks its own event loop for 5 s while the others
 * are under CPU load. With an SBR stability window longer than the stall (10 s; the fast
 * profile's 2 s window would rightly treat a 5 s silence as a crash), nobody is downed,
 * every member stays (nothing lost), the cluster converges again, and the stalled member
 * says in its log that it was stalled and marks nobody unreachable on that evidence
 * (self-aware failure detection, docs/cluster.md).
 */
import { describe, expect, it } from "vitest";
import { installChildTeardown } from "../support/child-teardown.js";
import {
  type ClusterNode,
  clusterEvents,
  command,
  freePorts,
  seedNodesOf,
  startMember,
  waitAllUp,
} from "./cluster-node.js";

installChildTeardown("perTest");

const BLOCK_MS = 5_000;
const STABLE_AFTER_MS = 10_000;

describe("real: a member's event loop blocked for 5 s under load", () => {
  it("nobody is downed, every member stays, and the stalled member blames only itself", async () => {
    const names = ["a", "b", "c", "d"];
    const ports = (await freePorts(names.length)).sort((x, y) => x - y);
    const seedNodes = seedNodesOf(ports);
    const nodes: ClusterNode[] = await Promise.all(
      names.map((n, i) =>
        startMember(n, {
          port: ports[i],
          seedNodes,
          downing: { stableAfterMs: STABLE_AFTER_MS },
          logLevel: "info",
        }),
      ),
    );
    await waitAllUp(nodes, nodes, 30_000);
    await new Promise((r) => setTimeout(r, 1_000));
    const victim = nodes[2] as ClusterNode;
    const startedAt = Date.now();
    for (const n of nodes)
      if (n !== victim) await command(n, "burn", { ms: BLOCK_MS + 3_000, dutyPct: 40 });
    await command(victim, "block", { ms: BLOCK_MS });
    // the stall, its detection and the way back, well inside the stability window
    await new Promise((r) => setTimeout(r, BLOCK_MS + 3_000));
    await waitAllUp(nodes, nodes, 20_000);

    for (const n of nodes) {
      const bad = clusterEvents(n).filter(
        (e) =>
          e.t >= startedAt &&
          (e.type === "member-downed" || e.type === "member-removed" || e.type === "member-left"),
      );
      expect(bad, `${n.name} saw members go`).toEqual([]);
      expect(n.child.events.some((e) => e.event === "self-removed")).toBe(false);
    }
    const own = victim.child.stderr.filter((l) => l.includes("marking node as unreachable"));
    expect(own, "the stalled member marked others unreachable").toEqual([]);
    expect(victim.child.stderr.some((l) => l.includes("itself was stalled"))).toBe(true);
  }, 60_000);
});
