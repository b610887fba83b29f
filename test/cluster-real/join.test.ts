/**
 * Scenario M1 (real; docs/scenarios.md): seed nodes started at once form one cluster over real TCP between
 * Node processes; a node that joins later is Joining, then Up, on every member.
 */
import { describe, expect, it } from "vitest";
import { installChildTeardown } from "../support/child-teardown.js";
import {
  clusterEvents,
  freePorts,
  seedNodesOf,
  startMember,
  startSeedMembers,
  waitAllUp,
  waitForEvent,
} from "./cluster-node.js";

installChildTeardown("perTest");

describe("M1 real: joining through seed nodes", () => {
  it("three seed nodes started concurrently form ONE cluster (all Up, convergence, same leader); a 4th node joins later and is Joined then Up everywhere", async () => {
    const ports = await freePorts(3);
    const seeds = await startSeedMembers(["A", "B", "C"], ports);
    const formedAt = Date.now();
    const views = await waitAllUp(seeds, seeds);
    console.log(
      `[M1] 3 seed nodes: all Up with convergence ${Date.now() - formedAt} ms after ready`,
    );

    // One cluster: everyone lists the same incarnations and agrees on the leader, which
    // is the member with the lowest address.
    const lowest = [...seeds].sort((x, y) => x.port - y.port)[0]?.hostPort;
    for (const v of views) {
      expect(v.leader).toBe(lowest);
      expect(v.convergence).toBe(true);
      expect(v.members.map((m) => m.hostPort).sort()).toEqual(seeds.map((s) => s.hostPort).sort());
    }
    // Up numbers (age) are assigned once by the leader and gossiped: identical views.
    const ages = views.map((v) => JSON.stringify(v.members.map((m) => [m.hostPort, m.upNumber])));
    expect(new Set(ages).size).toBe(1);

    const d = await startMember("D", { seedNodes: seedNodesOf(ports) });
    const joinedAt = Date.now();
    const all = [...seeds, d];
    const after = await waitAllUp(all, all);
    console.log(
      `[M1] 4th node: Up everywhere with convergence ${Date.now() - joinedAt} ms after ready`,
    );
    // The leader is the lowest address among all members (D's free port may be lower).
    const lowestOfAll = [...all].sort((x, y) => x.port - y.port)[0]?.hostPort;
    for (const v of after) expect(v.leader).toBe(lowestOfAll);

    for (const n of all) {
      await waitForEvent(n, "member-up", d.hostPort, 5_000);
      expect(
        clusterEvents(n, d.hostPort).map((e) => e.type),
        `${n.name}'s events about D`,
      ).toEqual(["member-joined", "member-up"]);
    }
    // Nobody was ever unreachable, downed or removed while forming.
    const forming = new Set([
      "member-joined",
      "member-up",
      "leader-changed",
      "role-leader-changed",
    ]);
    for (const n of all)
      expect(
        clusterEvents(n).filter((e) => !forming.has(e.type)),
        `${n.name}: unexpected events`,
      ).toEqual([]);
  }, 40_000);
});
