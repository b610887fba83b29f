/** The registry oracle of shardkit/testing on its own: what it accepts and what it flags. */
import { describe, expect, it } from "vitest";
import { bindShardLifecycle } from "../../src/cluster/sharding/sharding-lifecycle.js";
import { ShardingOracle, ShardingOracleError } from "../../src/testing/index.js";

const A = "shardkit://shop@a:2552#1";
const B = "shardkit://shop@b:2552#2";
const B2 = "shardkit://shop@b:2552#3";

describe("ShardingOracle", { timeout: 5_000 }, () => {
  it("accepts start, stop and a later start elsewhere; answers homes by host", () => {
    const o = new ShardingOracle();
    o.shardStarted("T", "1", A);
    o.entityStarted("T", "e", A, "1");
    expect(o.entityHome("T", "e")).toBe("a");
    expect(o.shardHome("T", "1")).toBe("a");
    o.entityStopped("T", "e", A, "1");
    o.shardStopped("T", "1", A);
    o.shardStarted("T", "1", B);
    o.entityStarted("T", "e", B, "1");
    expect([...o.liveEntities("T")]).toEqual([["e", "b"]]);
    expect([...o.liveShards("T")]).toEqual([["1", "b"]]);
    expect(o.liveEntities("Other").size).toBe(0);
    expect(o.entitiesStarted).toBe(2);
    expect(() => o.assertNoViolations()).not.toThrow();
  });

  it("flags a second live incarnation, a second shard home and an entity outside its shard", () => {
    const o = new ShardingOracle({ now: () => 42, describe: () => "seed=7 t=42" });
    o.shardStarted("T", "1", A);
    o.entityStarted("T", "e", A, "1");
    o.shardStarted("T", "1", B); // second home
    o.entityStarted("T", "e", B, "1"); // second incarnation
    o.entityStarted("T", "f", A, "9"); // shard 9 runs nowhere
    expect(o.violations.map((v) => v.kind)).toEqual(["shard", "entity", "entity-outside-shard"]);
    expect(() => o.assertNoViolations()).toThrow(ShardingOracleError);
    expect(() => o.assertNoViolations()).toThrow(
      /\[sim seed=7 t=42\] sharding oracle: 3 violation\(s\)[\s\S]*entity T\/e started on b at t=42 while live on a/,
    );
  });

  it("a stop from another node does not unregister; a crash forgets the node's registrations", () => {
    const o = new ShardingOracle();
    o.shardStarted("T", "1", A);
    o.entityStarted("T", "e", A, "1");
    o.entityStopped("T", "e", B, "1");
    o.shardStopped("T", "1", B);
    expect(o.entityHome("T", "e")).toBe("a");
    o.nodeCrashed("a");
    expect(o.entityHome("T", "e")).toBeUndefined();
    expect(o.shardHome("T", "1")).toBeUndefined();
    // a new incarnation of host b is another node; crashing it by full address works too
    o.shardStarted("T", "2", B2);
    o.nodeCrashed(B2);
    expect(o.liveShards("T").size).toBe(0);
    o.assertNoViolations();
  });

  it("the bound lifecycle reports live entities stopped before the shard, and swallows listener errors", () => {
    const calls: string[] = [];
    const bound = bindShardLifecycle(
      {
        entityStopped: (t, id, node) => calls.push(`entity-stopped ${t} ${id} ${node}`),
        shardStopped: (t, id, node) => calls.push(`shard-stopped ${t} ${id} ${node}`),
        shardStarted: () => {
          throw new Error("listener bug");
        },
      },
      "T",
      A,
    );
    expect(bindShardLifecycle(undefined, "T", A)).toBeUndefined();
    expect(() => bound?.shardStarted("1")).not.toThrow();
    bound?.entityStarted("x", "1"); // method absent: nothing happens
    bound?.shardStopped("1", ["x", "y"]);
    expect(calls).toEqual([
      `entity-stopped T x ${A}`,
      `entity-stopped T y ${A}`,
      `shard-stopped T 1 ${A}`,
    ]);
  });
});
