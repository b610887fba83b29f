/**
 * ClusterProfiles (docs/cluster.md, "Profiles"): the presets are frozen, and a cluster
 * started with the fast profile removes a crashed member within seconds of virtual time
 * where the default profile takes tens of seconds.
 */
import { describe, expect, it } from "vitest";
import { ClusterNode, ClusterProfiles } from "../../src/index.js";
import { SimNetwork, SimWorld } from "../../src/runtime/sim/index.js";

async function crashToRemovalMs(profile: keyof typeof ClusterProfiles, seed: number) {
  const world = new SimWorld({ seed });
  const network = new SimNetwork(world);
  const seeds = ["a:2552", "b:2552", "c:2552"];
  const nodes: ClusterNode[] = [];
  for (const name of ["a", "b", "c"])
    ClusterNode.start({
      ...ClusterProfiles[profile],
      systemName: "p",
      host: name,
      port: 2552,
      seedNodes: seeds,
      runtime: world.createRuntime(name),
      transport: network.transportFor(name),
    }).then((n) => nodes.push(n));
  const up = () =>
    nodes.length === 3 &&
    nodes.every((n) => n.cluster.state.members.filter((m) => m.status === "up").length === 3);
  expect(await world.runUntil(up, 60_000)).toBe(true);
  const crashedAt = world.now;
  world.getRuntime("c")?.scheduler.cancelAll();
  network.crash("c");
  const survivors = nodes.filter((n) => n.address !== "p@c:2552");
  const removed = () => survivors.every((n) => n.cluster.state.members.length === 2);
  expect(await world.runUntil(removed, 120_000)).toBe(true);
  return world.now - crashedAt;
}

describe("ClusterProfiles", () => {
  it("are frozen presets", () => {
    expect(Object.isFrozen(ClusterProfiles)).toBe(true);
    expect(Object.isFrozen(ClusterProfiles.fast)).toBe(true);
    expect(Object.isFrozen(ClusterProfiles.fast.settings)).toBe(true);
    expect(ClusterProfiles.default).toEqual({});
  });

  it("fast removes a crashed member within 6 s of virtual time; default takes over 20 s", async () => {
    const fast = await crashToRemovalMs("fast", 1);
    const slow = await crashToRemovalMs("default", 1);
    expect(fast).toBeLessThan(6_000);
    expect(slow).toBeGreaterThan(20_000);
  });
});
