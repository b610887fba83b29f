/**
 * Allocation strategies that answer with promises: adaptAllocationStrategy (unit) and a
 * sharded cluster in the simulator whose strategy decides asynchronously (S18 variant).
 */
import { describe, expect, it } from "vitest";
import { ClusterSharding } from "../../src/api/index.js";
import {
  adaptAllocationStrategy,
  type ShardAllocationStrategy,
} from "../../src/cluster/sharding/async-strategy.js";
import type { RegionView } from "../../src/core/coordinator/allocation/region-view.js";
import { SETTLED_CLUSTER } from "../../src/core/coordinator/allocation/region-view.js";
import { simSeeds } from "../support/sim-seeds.js";
import { CounterKey, simSharding, startCluster } from "./sim-sharding.js";

const view = (regionId: string, shards: string[] = []): RegionView =>
  ({ regionId, shards, member: undefined }) as unknown as RegionView;

/** A promise with its resolve/reject exposed. */
function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe("adaptAllocationStrategy", () => {
  it("passes synchronous answers through", () => {
    const s = adaptAllocationStrategy(
      { allocateShard: (_q, _s, r) => r[1]?.regionId, rebalance: () => ["7"] },
      () => {},
      () => {},
    );
    expect(s.allocateShard("q", "1", [view("A"), view("B")])).toBe("B");
    expect([...s.rebalance([], new Set(), SETTLED_CLUSTER)]).toEqual(["7"]);
  });

  it("answers 'not now' while a promise is pending, wakes the driver, then gives the answer once", async () => {
    const d = deferred<string | undefined>();
    let calls = 0;
    let wakes = 0;
    const s = adaptAllocationStrategy(
      {
        allocateShard: () => {
          calls++;
          return d.promise;
        },
        rebalance: () => [],
      },
      () => void wakes++,
      () => {},
    );
    const regions = [view("A"), view("B")];
    expect(s.allocateShard("q", "1", regions)).toBeUndefined();
    expect(s.allocateShard("q", "1", regions)).toBeUndefined(); // still pending: no 2nd call
    expect(calls).toBe(1);
    d.resolve("B");
    await d.promise;
    await Promise.resolve();
    expect(wakes).toBe(1);
    expect(s.allocateShard("q", "1", regions)).toBe("B");
    // used once: the next request for the shard asks the strategy again
    expect(s.allocateShard("q", "1", regions)).toBeUndefined();
    expect(calls).toBe(2);
  });

  it("drops an answer that is no longer a candidate, and reports rejections and throws", async () => {
    const errors: string[] = [];
    let answer: Promise<string | undefined> = Promise.resolve("GONE");
    const s = adaptAllocationStrategy(
      {
        allocateShard: () => answer,
        rebalance: () => {
          throw new Error("boom");
        },
      },
      () => {},
      (op, e) => errors.push(`${op}: ${String(e)}`),
    );
    expect(s.allocateShard("q", "1", [view("A")])).toBeUndefined();
    await new Promise((r) => setImmediate(r));
    answer = Promise.reject(new Error("placement service down"));
    expect(s.allocateShard("q", "1", [view("A")])).toBeUndefined(); // GONE not a candidate
    await new Promise((r) => setImmediate(r));
    expect([...s.rebalance([], new Set(), SETTLED_CLUSTER)]).toEqual([]);
    expect(errors).toEqual([
      "allocateShard: Error: placement service down",
      "rebalance: Error: boom",
    ]);
  });

  it("proposes an asynchronous rebalance answer at the next tick, without shards already moving", async () => {
    const d = deferred<Iterable<string>>();
    let calls = 0;
    const s = adaptAllocationStrategy(
      {
        allocateShard: () => undefined,
        rebalance: () => {
          calls++;
          return d.promise;
        },
      },
      () => {},
      () => {},
    );
    expect([...s.rebalance([], new Set(), SETTLED_CLUSTER)]).toEqual([]);
    expect([...s.rebalance([], new Set(), SETTLED_CLUSTER)]).toEqual([]); // one call in flight
    d.resolve(["1", "2", "3"]);
    await d.promise;
    await Promise.resolve();
    expect([...s.rebalance([], new Set(["2"]), SETTLED_CLUSTER)]).toEqual(["1", "3"]);
    expect(calls).toBe(1);
  });
});

describe.each(simSeeds([1, 2]))("asynchronous allocation strategy (seed %i)", (seed) => {
  it("S18 async: shards go where the strategy's promises say; its async rebalance moves them", async () => {
    const { world, network, oracle } = simSharding(seed);
    let target = "b";
    const on = (regionId: string, host: string) => regionId.includes(`@${host}:`);
    // Answers after a round trip through the microtask queue (as a remote service would,
    // without real time: the simulator must stay deterministic).
    const later = <T>(v: T): Promise<T> => Promise.resolve().then(() => v);
    const strategy: ShardAllocationStrategy = {
      allocateShard: (_q, _shard, regions) =>
        later(regions.find((r) => on(r.regionId, target))?.regionId),
      rebalance: (regions, inProgress) =>
        later(
          regions
            .filter((r) => !on(r.regionId, target))
            .flatMap((r) => r.shards)
            .filter((s) => !inProgress.has(s)),
        ),
    };
    const nodes = await startCluster(world, network, oracle, ["a", "b", "c"], undefined, () => ({
      allocationStrategy: strategy,
      coordinatorSettings: { rebalanceIntervalMs: 1_000 },
    }));
    const a = nodes[0];
    if (a === undefined) throw new Error("no node");
    for (let i = 0; i < 30; i++)
      ClusterSharding.get(a).entityRefFor(CounterKey, `x-${i}`).tell({ type: "add", n: 1 });
    await world.advance(5_000);
    expect(oracle.liveEntities(CounterKey.name).size).toBe(30);
    expect(new Set(oracle.liveShards(CounterKey.name).values())).toEqual(new Set(["b"]));
    target = "c";
    // The rebalance hands every shard off b (a handed-off shard restarts on its next message).
    const offB = await world.runUntil(
      () => ![...oracle.liveShards(CounterKey.name).values()].includes("b"),
      60_000,
    );
    expect(offB, `[sim ${world.describe()}]`).toBe(true);
    for (let i = 0; i < 30; i++)
      ClusterSharding.get(a).entityRefFor(CounterKey, `x-${i}`).tell({ type: "add", n: 1 });
    await world.advance(5_000);
    expect(new Set(oracle.liveShards(CounterKey.name).values())).toEqual(new Set(["c"]));
    expect(oracle.liveEntities(CounterKey.name).size).toBe(30);
    oracle.assertNoViolations();
  });
});
