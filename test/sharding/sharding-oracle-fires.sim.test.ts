/**
 * The registry oracle proves it can fire: each scenario injects, from test code only, a
 * fault that breaks one promise the oracle guards, runs real sharding in the simulator,
 * and asserts that the run FAILS with the oracle's message for that property. An oracle
 * that never fires would pass every other simulator test; these would fail.
 *
 * The faults (no production flag; docs/testing.md):
 * - split brain by construction: a member started with only itself as seed node forms a
 *   second cluster next to the first, with its own coordinator; both report to one
 *   oracle. The same entity used in both: two live incarnations (and two homes of its
 *   shard); two entities of one shard, one per cluster: two homes of that shard only.
 * - a zombie: the scenario tells the oracle a member was killed (as crashNode does) but
 *   the kill did not happen, so the member's shard still runs: an entity it starts then
 *   runs outside any live shard the oracle knows.
 */
import { describe, expect, it } from "vitest";
import { type ClusterNode, ClusterSharding } from "../../src/api/index.js";
import { murmur3ShardId } from "../../src/core/sharding/shard-id.js";
import type { SimNetwork, SimWorld } from "../../src/runtime/sim/index.js";
import type { ShardingOracle } from "../../src/testing/index.js";
import { simSeeds } from "../support/sim-seeds.js";
import { allUp, CounterKey, simSharding, startNode } from "./sim-sharding.js";

const SHARDS = 20;

/** Two entity ids of one shard. */
function sameShardIds(): [string, string, string] {
  const first = "f-0";
  const shard = murmur3ShardId(first, SHARDS);
  for (let i = 1; ; i++)
    if (murmur3ShardId(`f-${i}`, SHARDS) === shard) return [first, `f-${i}`, shard];
}

/** Cluster {a, b} and, next to it, a one-member cluster {x} (split brain by construction). */
async function splitBrain(world: SimWorld, network: SimNetwork, oracle: ShardingOracle) {
  const extras = { numberOfShards: SHARDS };
  const a = await startNode(world, network, "a", ["a:2552"], oracle, extras);
  const b = await startNode(world, network, "b", ["a:2552"], oracle, extras);
  const x = await startNode(world, network, "x", ["x:2552"], oracle, extras);
  const formed = await world.runUntil(() => allUp(a, 2) && allUp(b, 2) && allUp(x, 1), 30_000);
  expect(formed, `[sim ${world.describe()}] clusters did not form`).toBe(true);
  await world.advance(3_000);
  return { a, b, x };
}

const add = (node: ClusterNode, id: string) =>
  ClusterSharding.get(node).entityRefFor(CounterKey, id).tell({ type: "add", n: 1 });

describe.each(simSeeds([1]))("the oracle fires on injected faults (seed %i)", (seed) => {
  it("two live incarnations: one entity used in two clusters fails the run with the oracle's message", async () => {
    const { world, network, oracle } = simSharding(seed);
    const { a, x } = await splitBrain(world, network, oracle);
    add(a, "twice");
    await world.advance(1_000);
    expect(oracle.violations).toEqual([]);
    add(x, "twice");
    await world.advance(1_000);
    expect(oracle.violations.map((v) => v.kind)).toContain("entity");
    expect(() => oracle.assertNoViolations()).toThrow(
      /sharding oracle: \d+ violation\(s\)[\s\S]*entity Counter\/twice started on [ax] at t=[\d.]+ while live on [ax]/,
    );
  }, 30_000);

  it("two homes for a shard: two entities of one shard, one per cluster, fail the run with the oracle's message", async () => {
    const { world, network, oracle } = simSharding(seed);
    const { b, x } = await splitBrain(world, network, oracle);
    const [e1, e2, shard] = sameShardIds();
    add(b, e1);
    await world.advance(1_000);
    add(x, e2);
    await world.advance(1_000);
    expect(oracle.violations.map((v) => v.kind)).toEqual(["shard"]);
    expect(() => oracle.assertNoViolations()).toThrow(
      new RegExp(
        `sharding oracle: 1 violation\\(s\\)\\n  - shard Counter/${shard} started on x at t=[\\d.]+ while live on [ab]`,
      ),
    );
  }, 30_000);

  it("entity outside its shard's node: a member declared killed keeps running its shard; its new entity fails the run", async () => {
    const { world, network, oracle } = simSharding(seed);
    const a = await startNode(world, network, "a", ["a:2552"], oracle, {
      numberOfShards: SHARDS,
    });
    await world.runUntil(() => allUp(a, 1), 30_000);
    await world.advance(2_000);
    const [e1, e2, shard] = sameShardIds();
    add(a, e1);
    await world.advance(1_000);
    expect(oracle.shardHome(CounterKey.name, shard)).toBe("a");
    // the fault: the kill the scenario reports to the oracle does not happen
    oracle.nodeCrashed("a");
    add(a, e2);
    await world.advance(1_000);
    expect(oracle.violations.map((v) => v.kind)).toEqual(["entity-outside-shard"]);
    expect(() => oracle.assertNoViolations()).toThrow(
      new RegExp(
        `sharding oracle: 1 violation\\(s\\)\\n  - entity Counter/${e2} started on a at t=[\\d.]+ but its shard ${shard} is live on no node`,
      ),
    );
  }, 30_000);
});
