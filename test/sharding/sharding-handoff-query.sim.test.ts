/**
 * getShardHandOffs (and the management route GET /cluster/shards/{type}, which shows it):
 * a hand-off in progress is visible at the coordinator with its shard, old region, reason
 * and phase, and gone once the hand-off ends. The entities ignore their hand-off stop
 * message, so the hand-off waits for the shard's handOffTimeoutMs: a window the test can
 * look into.
 */
import { describe, expect, it } from "vitest";
import { Behaviors } from "../../src/actor/index.js";
import {
  type ClusterNode,
  ClusterSharding,
  EntityTypeKey,
  type ShardHandOff,
} from "../../src/api/index.js";
import { simSeeds } from "../support/sim-seeds.js";
import { allUp, simSharding, startNode } from "./sim-sharding.js";

type Sticky = { type: "touch" } | { type: "stop-please" };
const StickyKey = EntityTypeKey<Sticky>("Sticky");
const HAND_OFF_TIMEOUT_MS = 20_000;

function initSticky(node: ClusterNode): void {
  ClusterSharding.get(node).init({
    typeKey: StickyKey,
    numberOfShards: 6,
    // ignored by the entity: the hand-off then lasts until the shard's handOffTimeoutMs
    handOffStopMessage: { type: "stop-please" } as Sticky,
    settings: {
      coordinator: { rebalanceIntervalMs: 1_000 },
      shard: { handOffTimeoutMs: HAND_OFF_TIMEOUT_MS },
    },
    createBehavior: () => Behaviors.receiveMessage<Sticky>(() => {}),
  });
}

describe.each(simSeeds([1, 2]))("shard hand-offs in progress (seed %i)", (seed) => {
  it("a rebalance's hand-off is listed while it runs, with its shard, region and phase, then gone", async () => {
    const { world, network, oracle } = simSharding(seed);
    const seeds = ["a:2552", "b:2552"];
    const a = await startNode(world, network, "a", seeds, oracle, { sharding: false });
    const b = await startNode(world, network, "b", seeds, oracle, { sharding: false });
    initSticky(a);
    initSticky(b);
    expect(await world.runUntil(() => allUp(a, 2) && allUp(b, 2), 30_000)).toBe(true);
    await world.advance(3_000);
    for (let i = 0; i < 60; i++)
      ClusterSharding.get(a).entityRefFor(StickyKey, `s-${i}`).tell({ type: "touch" });
    await world.advance(3_000);
    const query = async (): Promise<readonly ShardHandOff[]> => {
      let got: readonly ShardHandOff[] | undefined;
      ClusterSharding.get(a)
        .getShardHandOffs(StickyKey, { timeoutMs: 2_000 })
        .then((h) => {
          got = h;
        });
      await world.runUntil(() => got !== undefined, 3_000);
      return got ?? [];
    };
    expect(await query(), `[sim ${world.describe()}] settled`).toEqual([]);

    // A third member joins: the coordinator moves shards to it, one hand-off at a time.
    const c = await startNode(world, network, "c", [...seeds], oracle, { sharding: false });
    initSticky(c);
    let seen: readonly ShardHandOff[] = [];
    const deadline = world.now + 30_000;
    while (seen.length === 0 && world.now < deadline) {
      await world.advance(500);
      seen = await query();
    }
    expect(seen.length, `[sim ${world.describe()}] a hand-off in progress`).toBeGreaterThan(0);
    const h = seen[0] as ShardHandOff;
    expect(h.reason).toBe("rebalance");
    expect(["begin", "hand-off"]).toContain(h.phase);
    expect(h.fromRegion).toMatch(/@(a|b):2552/);
    expect(h.startedAtMs).toBeLessThanOrEqual(world.now);
    // After the hand-off timeout the shard has moved and the list no longer has it.
    await world.advance(HAND_OFF_TIMEOUT_MS + 5_000);
    const later = await query();
    expect(
      later.some((x) => x.shardId === h.shardId && x.startedAtMs === h.startedAtMs),
      `[sim ${world.describe()}] hand-off of ${h.shardId} finished`,
    ).toBe(false);
  });
});
