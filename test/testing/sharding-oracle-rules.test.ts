/**
 * The registry oracle's rules one by one (src/testing/sharding-oracle.ts): the counters,
 * each violation's fields and text (with and without a clock, a shard that runs nowhere),
 * the error's truncation, labels, per-type queries and crash by label or address. Its
 * bigger picture is in sharding-oracle.test.ts; these pin the details a mutant could change.
 */
import { describe, expect, it } from "vitest";
import { ShardingOracle, ShardingOracleError } from "../../src/testing/index.js";

const A = "shardkit://shop@a:2552#1";
const B = "shardkit://shop@b:2552#2";

describe("ShardingOracle rules", { timeout: 5_000 }, () => {
  it("counts shard starts, shard stops (even unmatched ones) and entity starts", () => {
    const o = new ShardingOracle();
    expect([o.shardsStarted, o.shardsStopped, o.entitiesStarted]).toEqual([0, 0, 0]);
    o.shardStarted("T", "1", A);
    o.shardStarted("T", "2", A);
    o.entityStarted("T", "e", A, "1");
    o.shardStopped("T", "1", B); // not its home: still counted, still live on a
    o.shardStopped("T", "2", A);
    expect([o.shardsStarted, o.shardsStopped, o.entitiesStarted]).toEqual([2, 2, 1]);
    expect([...o.liveShards("T")]).toEqual([["1", "a"]]);
    o.entityStopped("T", "e", A, "1");
    expect(o.liveEntities("T").size).toBe(0);
    expect(o.violations).toEqual([]);
  });

  it("records each violation's kind, ids, nodes and time, with a readable text", () => {
    let now = 5;
    const o = new ShardingOracle({ now: () => now });
    o.shardStarted("T", "1", A);
    o.entityStarted("T", "e", A, "1");
    now = 9;
    o.shardStarted("T", "1", B);
    o.entityStarted("T", "e", B, "1");
    o.entityStarted("T", "f", A, "7");
    expect(o.violations).toEqual([
      {
        kind: "shard",
        typeName: "T",
        id: "1",
        node: B,
        liveOn: A,
        atMs: 9,
        text: "shard T/1 started on b at t=9 while live on a (since t=5)",
      },
      {
        kind: "entity",
        typeName: "T",
        id: "e",
        node: B,
        liveOn: A,
        atMs: 9,
        text: "entity T/e started on b at t=9 while live on a (since t=5)",
      },
      {
        kind: "entity-outside-shard",
        typeName: "T",
        id: "f",
        node: A,
        liveOn: "nowhere",
        atMs: 9,
        text: "entity T/f started on a at t=9 but its shard 7 is live on no node",
      },
    ]);
  });

  it("flags an entity started on another node than its shard's, naming that node", () => {
    const o = new ShardingOracle();
    o.shardStarted("T", "1", A);
    o.entityStarted("T", "e", B, "1");
    expect(o.violations.map((v) => [v.kind, v.liveOn, v.atMs, v.text])).toEqual([
      [
        "entity-outside-shard",
        A,
        undefined,
        "entity T/e started on b but its shard 1 is live on a",
      ],
    ]);
    // The entity is registered anyway: a second start is a second incarnation.
    expect(o.entityHome("T", "e")).toBe("b");
  });

  it("without a clock, texts carry no times", () => {
    const o = new ShardingOracle();
    o.shardStarted("T", "1", A);
    o.shardStarted("T", "1", B);
    expect(o.violations[0]?.text).toBe("shard T/1 started on b while live on a");
    expect(o.violations[0]?.atMs).toBeUndefined();
  });

  it("the error lists at most 20 violations and says how many more, with no run prefix by default", () => {
    const o = new ShardingOracle();
    o.shardStarted("T", "1", A);
    for (let i = 0; i < 22; i++) o.shardStarted("T", "1", i % 2 === 0 ? B : A);
    expect(o.violations).toHaveLength(22);
    let error: unknown;
    try {
      o.assertNoViolations();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ShardingOracleError);
    const message = (error as Error).message;
    expect(message.startsWith("sharding oracle: 22 violation(s)\n  - shard T/1 started on b")).toBe(
      true,
    );
    expect(message.split("\n").filter((l) => l.startsWith("  - "))).toHaveLength(20);
    expect(message.endsWith("\n  ... and 2 more")).toBe(true);
    expect((error as ShardingOracleError).code).toBe("SHARDING_ORACLE_VIOLATION");
  });

  it("exactly 20 violations: all listed, no '... and more' line", () => {
    const o = new ShardingOracle({ describe: () => "seed=3" });
    o.shardStarted("T", "1", A);
    for (let i = 0; i < 20; i++) o.shardStarted("T", "1", A);
    expect(() => o.assertNoViolations()).toThrow(/^\[sim seed=3\] sharding oracle: 20 violation/);
    try {
      o.assertNoViolations();
    } catch (e) {
      expect((e as Error).message).not.toContain("more");
      expect((e as Error).message.split("\n")).toHaveLength(21);
      // the list is the end of the message
      expect((e as Error).message.endsWith("\n  - shard T/1 started on a while live on a")).toBe(
        true,
      );
    }
  });

  it("labels nodes with the given function; queries are per type name", () => {
    const o = new ShardingOracle({ label: (n) => `node-${n.slice(-1)}` });
    o.shardStarted("T", "1", A);
    o.shardStarted("TT", "1", B);
    o.entityStarted("T", "e", A, "1");
    o.entityStarted("TT", "e", B, "1");
    expect([...o.liveShards("T")]).toEqual([["1", "node-1"]]);
    expect([...o.liveShards("TT")]).toEqual([["1", "node-2"]]);
    expect([...o.liveEntities("T")]).toEqual([["e", "node-1"]]);
    expect(o.entityHome("TT", "e")).toBe("node-2");
    expect(o.shardHome("T", "1")).toBe("node-1");
    expect(o.shardHome("T", "2")).toBeUndefined();
    expect(o.violations).toEqual([]);
    // crash by label, only that node's registrations go
    o.nodeCrashed("node-1");
    expect(o.liveShards("T").size).toBe(0);
    expect(o.liveEntities("T").size).toBe(0);
    expect([...o.liveShards("TT")]).toEqual([["1", "node-2"]]);
    expect([...o.liveEntities("TT")]).toEqual([["e", "node-2"]]);
  });

  it("a node that is not a unique address is its own label", () => {
    const o = new ShardingOracle();
    o.shardStarted("T", "1", "plain-node");
    o.shardStarted("T", "2", "x@host:notaport");
    expect(o.shardHome("T", "1")).toBe("plain-node");
    expect(o.shardHome("T", "2")).toBe("x@host:notaport");
    o.nodeCrashed("plain-node");
    expect([...o.liveShards("T")]).toEqual([["2", "x@host:notaport"]]);
  });

  it("a fenced write with a token older than the newest is a stale-write; equal or newer is not", () => {
    let now = 3;
    const o = new ShardingOracle({ now: () => now });
    o.fencedWrite("Cart/7", 4, 4, "Cart|e1"); // equal: the current holder
    o.fencedWrite("Cart/7", 5, 4, "Cart|e1"); // newer than the store saw: fine
    expect(o.violations).toEqual([]);
    now = 8;
    o.fencedWrite("Cart/7", 3, 4, "Cart|e2");
    expect(o.fencedWrites).toBe(3);
    expect(o.violations).toEqual([
      {
        kind: "stale-write",
        typeName: "Cart",
        id: "Cart|e2",
        node: "Cart/7",
        liveOn: "Cart/7",
        atMs: 8,
        text: "event of Cart|e2 written at t=8 with token 3 of Cart/7 while the newest token was 4",
      },
    ]);
    expect(() => o.assertNoViolations()).toThrow(
      /1 violation\(s\)\n {2}- event of Cart\|e2 written at t=8 with token 3/,
    );
  });

  it("a stale write's type name is the fence key up to its last slash; no clock, no time", () => {
    const o = new ShardingOracle();
    o.fencedWrite("shop/Cart/12", 1, 2, "p");
    expect(o.violations.map((v) => [v.typeName, v.atMs, v.text])).toEqual([
      [
        "shop/Cart",
        undefined,
        "event of p written with token 1 of shop/Cart/12 while the newest token was 2",
      ],
    ]);
  });

  it("the error carries the violations themselves, for a test to inspect", () => {
    const o = new ShardingOracle();
    o.shardStarted("T", "1", A);
    o.shardStarted("T", "1", B);
    let error: unknown;
    try {
      o.assertNoViolations();
    } catch (e) {
      error = e;
    }
    expect((error as ShardingOracleError).fields).toEqual({ violations: o.violations });
  });

  it("the default label is the whole host of a unique address", () => {
    const o = new ShardingOracle();
    o.shardStarted("T", "1", "shardkit://shop@node-a.example:25520#77");
    expect(o.shardHome("T", "1")).toBe("node-a.example");
  });
});
