/**
 * S21 (real): order per sender checked from every side, with four Node processes on
 * 127.0.0.1 (sharding-node-main.ts). A (the oldest: the coordinator's node), B and C form
 * the cluster and all three send; D joins and sends too, and rebalances (every second)
 * move shards to it; then C stops sending and leaves gracefully, handing its shards off
 * while A, B and D send. So most hand-offs happen while members that are neither the
 * coordinator's nor the shard's old or new home are sending to the shard.
 *
 * Checked over all incarnations: every message of every sender reached its counter
 * exactly once and in the order sent (checkDelivery, strict), never two live
 * incarnations of one counter, and shards really moved both ways (to D, away from C).
 * Bounded well under 60 s.
 */
import { describe, expect, it } from "vitest";
import { installChildTeardown } from "../support/child-teardown.js";
import { waitAllUp } from "./cluster-node.js";
import {
  cmd,
  currentRegions,
  expectAllDelivered,
  ids,
  incarnationViolations,
  joinNow,
  type SentCounts,
  type ShardingNode,
  shardingStats,
  shardsByHost,
  startShardingNodes,
  until,
} from "./sharding-node.js";
import type { EntityTypeConfig } from "./sharding-node-main.js";

installChildTeardown("perFile");

const TYPE = "Counter";
const counter: EntityTypeConfig = {
  name: TYPE,
  numberOfShards: 12,
  settings: { coordinator: { rebalanceIntervalMs: 1_000 } },
  leastShard: { absoluteLimit: 2, relativeLimit: 1 },
};
const ENTITIES = ids("o", 48);
const LOAD_INTERVAL_MS = 100;
/** Bound on a graceful leave on a busy box. */
const EXIT_TIMEOUT_MS = 20_000;
const DELIVERY_TIMEOUT_MS = 8_000;

describe("S21 real: senders on every member while shards move (A, B, C; D joins, C leaves)", () => {
  it("exactly once and in order per sender, for every sender", async () => {
    const started = Date.now();
    const { nodes } = await startShardingNodes(
      ["A", "B", "C", "D"].map((name) => ({ name, types: [counter], joinLater: name === "D" })),
      3,
    );
    const [a, b, c, d] = nodes as [ShardingNode, ShardingNode, ShardingNode, ShardingNode];
    await waitAllUp([a, b, c], [a, b, c]);
    await until(
      async () => ((await currentRegions(a)).length === 3 ? true : undefined),
      10_000,
      "3 regions registered",
    );
    const sent: Record<string, SentCounts> = {};
    const startLoad = async (n: ShardingNode) =>
      cmd(n, "load", { ids: ENTITIES, intervalMs: LOAD_INTERVAL_MS });
    const stopLoad = async (n: ShardingNode) => {
      sent[n.hostPort] = (await cmd(n, "load-stop")).sent as SentCounts;
    };
    for (const n of [a, b, c]) await startLoad(n);
    const hostsOf = async () => shardsByHost(await shardingStats(a, 2_000));
    const before = await until(
      async () => {
        const s = await hostsOf();
        return [...s.values()].reduce((x, l) => x + l.length, 0) === 12 ? s : undefined;
      },
      10_000,
      "all 12 shards allocated",
    );

    // D joins and sends; rebalances move shards to it.
    await joinNow(d, a.hostPort);
    await waitAllUp([a, b, c, d], [a, b, c, d]);
    await startLoad(d);
    await until(
      async () => ((await hostsOf()).get(d.hostPort)?.length ?? 0) >= 2 || undefined,
      15_000,
      "rebalance moved shards to D",
    );

    // C stops sending and leaves; its shards are handed off while A, B and D send.
    await stopLoad(c);
    const cShards = (await hostsOf()).get(c.hostPort)?.length ?? 0;
    expect(cShards, "C hosts shards when it leaves").toBeGreaterThan(0);
    await cmd(c, "leave");
    let timer: NodeJS.Timeout | undefined;
    const exit = await Promise.race([
      c.child.exited,
      new Promise<never>((_, fail) => {
        timer = setTimeout(() => fail(new Error("C did not exit")), EXIT_TIMEOUT_MS);
      }),
    ]).finally(() => clearTimeout(timer));
    expect(exit).toEqual({ code: 0, signal: null });
    await waitAllUp([a, b, d], [a, b, d], EXIT_TIMEOUT_MS);
    await new Promise((r) => setTimeout(r, 1_000));
    for (const n of [a, b, d]) await stopLoad(n);

    const { reordered } = await expectAllDelivered(
      nodes,
      b,
      TYPE,
      ENTITIES,
      sent,
      DELIVERY_TIMEOUT_MS,
      "strict",
    );
    expect(reordered).toBe(0);
    expect(incarnationViolations(nodes, TYPE)).toEqual([]);
    const after = await hostsOf();
    expect(after.has(c.hostPort)).toBe(false);
    expect(after.get(d.hostPort)?.length ?? 0).toBeGreaterThan(0);
    const moved = nodes.flatMap((n) => n.child.events.filter((x) => x.event === "entity-stopped"));
    expect(moved.length, "entities were handed off").toBeGreaterThan(0);
    const total = Object.values(sent)
      .flatMap((m) => Object.values(m))
      .reduce((x, y) => x + y, 0);
    console.log(
      `[S21 real] shards ${[a, b, c].map((n) => `${n.name} ${before.get(n.hostPort)?.length ?? 0}`).join(", ")} -> D took shards, C (${cShards}) left; ${moved.length} entity stops; ${total} messages from 4 senders delivered once, in order; ${Date.now() - started} ms`,
    );
  }, 60_000);
});
