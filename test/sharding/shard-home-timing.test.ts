/**
 * ShardHomeTiming (src/cluster/sharding/shard-home-timing.ts): the region's GetShardHome
 * round trips as the metrics see them, with a scripted clock.
 */
import { describe, expect, it } from "vitest";
import { ShardHomeTiming } from "../../src/cluster/sharding/shard-home-timing.js";

function timing(timedMax?: number) {
  let now = 0;
  const reports: [string, number][] = [];
  const t = new ShardHomeTiming(
    () => now,
    (shard, ms) => reports.push([shard, ms]),
    timedMax,
  );
  return { t, reports, at: (ms: number) => (now = ms) };
}

describe("ShardHomeTiming", () => {
  it("times from the first request to the answer naming the home, once", () => {
    const { t, reports, at } = timing();
    at(100);
    t.asked("1");
    at(250);
    t.asked("1"); // a retry keeps the first time
    at(400);
    t.received({ type: "shard-home", shard: "1", region: "r" });
    t.received({ type: "shard-home", shard: "1", region: "r" }); // not asked any more
    expect(reports).toEqual([["1", 300]]);
    expect(t.pending).toBe(0);
  });

  it("host-shard and the shard-homes listing a shard answer it; other messages do not", () => {
    const { t, reports, at } = timing();
    at(10);
    t.asked("a");
    t.asked("b");
    t.asked("c");
    at(30);
    t.received({ type: "register-ack", coordinator: "x" });
    t.received({ type: "begin-hand-off", shard: "a", handOffId: 1 });
    t.received({ type: "hand-off", shard: "a", handOffId: 1 });
    expect(reports).toEqual([]);
    t.received({ type: "host-shard", shard: "a" });
    at(50);
    t.received({ type: "shard-homes", homes: [{ region: "r", shards: ["c", "z"] }] });
    expect(reports).toEqual([
      ["a", 20],
      ["c", 40],
    ]);
    expect(t.pending).toBe(1);
    t.clear();
    t.received({ type: "shard-home", shard: "b", region: "r" });
    expect(reports).toHaveLength(2);
  });

  it("times at most timedMax shards at once (the others are not measured)", () => {
    const { t, reports, at } = timing(2);
    t.asked("1");
    t.asked("2");
    t.asked("3");
    expect(t.pending).toBe(2);
    at(5);
    for (const shard of ["1", "2", "3"]) t.received({ type: "shard-home", shard, region: "r" });
    expect(reports.map(([s]) => s)).toEqual(["1", "2"]);
  });
});
