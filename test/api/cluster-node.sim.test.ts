/**
 * ClusterNode in the simulator: three members start through the facade, form a cluster,
 * and `node.shutdown()` runs coordinated shutdown: the node leaves, the others see it
 * removed, its actor system terminates, and the promise resolves with the reason.
 */
import { describe, expect, it } from "vitest";
import { ClusterNode } from "../../src/api/index.js";
import { SimNetwork, SimWorld } from "../../src/runtime/sim/index.js";
import { FAST } from "../cluster/sim-cluster.js";

describe.each([1, 2])("ClusterNode (seed %i)", (seed) => {
  it("starts members, forms a cluster, and shuts one down gracefully", async () => {
    const world = new SimWorld({ seed });
    const network = new SimNetwork(world);
    const seeds = ["a:2552", "b:2552", "c:2552"];
    const started: ClusterNode[] = [];
    for (const name of ["a", "b", "c"])
      ClusterNode.start({
        systemName: "shop",
        host: name,
        port: 2552,
        seedNodes: seeds,
        settings: FAST,
        runtime: world.createRuntime(name),
        transport: network.transportFor(name),
      }).then((n) => started.push(n));
    const allUp = () =>
      started.length === 3 &&
      started.every(
        (n) =>
          n.cluster.state.members.length === 3 &&
          n.cluster.state.members.every((m) => m.status === "up"),
      );
    expect(await world.runUntil(allUp, 30_000)).toBe(true);

    const leaving = started.find((n) => n.address === "shop@c:2552");
    if (leaving === undefined) throw new Error("no c");
    let reason: string | undefined;
    leaving.shutdown().then((r) => {
      reason = r;
    });
    const others = started.filter((n) => n !== leaving);
    const done = () =>
      reason !== undefined &&
      leaving.system.isTerminated &&
      others.every((n) => n.cluster.state.members.length === 2 && n.cluster.state.convergence);
    expect(await world.runUntil(done, 60_000)).toBe(true);
    expect(reason).toBe("user");
  });
});
