/**
 * S4 (active-entity limit): a region with settings.region.activeEntityLimit divides it
 * over its active shards; a shard over its share passivates its least recently used
 * entities. The share function itself: test/core/region/region-units.test.ts.
 */
import { describe, expect, it } from "vitest";
import { type ActorRef, Behaviors } from "../../src/actor/index.js";
import { ClusterNode, ClusterSharding, EntityTypeKey } from "../../src/api/index.js";
import { SimNetwork, SimWorld } from "../../src/runtime/sim/index.js";
import { ShardingOracle } from "../../src/testing/index.js";
import { FAST } from "../cluster/sim-cluster.js";
import { simSeeds } from "../support/sim-seeds.js";

type Cmd = { type: "touch" } | { type: "get"; replyTo: ActorRef<number> };
const Key = EntityTypeKey<Cmd>("Limited");

describe.each(simSeeds([1, 2]))("sharding active-entity limit (seed %i)", (seed) => {
  it("S4: at most the limit stays active; the least recently used are passivated first", async () => {
    const world = new SimWorld({ seed });
    const network = new SimNetwork(world);
    let node: ClusterNode | undefined;
    ClusterNode.start({
      systemName: "lim",
      host: "a",
      port: 2552,
      seedNodes: ["a:2552"],
      settings: FAST,
      runtime: world.createRuntime("a"),
      transport: network.transportFor("a"),
    }).then((n) => {
      node = n;
    });
    expect(await world.runUntil(() => node !== undefined, 5_000)).toBe(true);
    const n = node as ClusterNode;
    const oracle = new ShardingOracle({ now: () => world.now, describe: () => world.describe() });
    const live = new Set<string>();
    let peak = 0;
    ClusterSharding.get(n).init({
      typeKey: Key,
      numberOfShards: 2,
      settings: { region: { activeEntityLimit: 10 } },
      lifecycle: oracle,
      createBehavior: ({ entityId }) =>
        Behaviors.setup<Cmd>(() => {
          live.add(entityId);
          let touched = 0;
          return Behaviors.receive<Cmd>(
            (_c, m) => {
              if (m.type === "touch") touched++;
              else m.replyTo.tell(touched);
            },
            (_c, sig) => {
              if (sig.type === "PostStop") live.delete(entityId);
            },
          );
        }),
    });
    await world.advance(3_000);
    const sharding = ClusterSharding.get(n);
    for (let i = 0; i < 40; i++) {
      sharding.entityRefFor(Key, `e-${i}`).tell({ type: "touch" });
      sharding.entityRefFor(Key, "hot").tell({ type: "touch" }); // always recently used
      await world.advance(50);
      peak = Math.max(peak, live.size);
    }
    await world.advance(1_000);
    // Two shards, 5 each: "hot" plus the most recent ones of each shard.
    expect(live.size).toBeLessThanOrEqual(10);
    expect(peak).toBeLessThanOrEqual(12); // a newcomer starts before the evicted one stops
    expect(live.has("hot")).toBe(true);
    expect(live.has("e-39")).toBe(true);
    expect(live.has("e-0")).toBe(false);
    let hot: number | undefined;
    sharding
      .entityRefFor(Key, "hot")
      .ask((replyTo: ActorRef<number>) => ({ type: "get", replyTo }), { timeoutMs: 1_000 })
      .then((v) => {
        hot = v;
      });
    expect(await world.runUntil(() => hot !== undefined, 2_000)).toBe(true);
    expect(hot).toBe(40); // never evicted: one incarnation saw every touch
    expect(oracle.liveEntities(Key.name).size).toBe(live.size);
    oracle.assertNoViolations();
  });
});
