/**
 * Scenario S8 and S9 (real; docs/scenarios.md): sharded counters in five Node processes on 127.0.0.1
 * (sharding-node-main.ts); the steps run in order on one cluster (teardown per file).
 * Rebalance is off, so shards move only because their region goes away. 100 counters;
 * C and D send one add to each every 100 ms while nodes go.
 *
 * - S8: A (the oldest: it runs the coordinator) leaves by itself (`cluster.leave(self)`)
 *   and D makes B leave (`cluster.leave(B)`), at once. Both run their coordinated
 *   shutdown ("cluster-leaving"), hand their shards off before the leader removes them
 *   (the exiting-tasks hold; without it B's buffered messages were lost), and exit 0; the
 *   shards of C and D stay where they were; A's and B's move to C and D; every counter
 *   answers.
 * - S9: E joins (an empty region: every shard in use has a home) and gets SIGTERM: it
 *   exits 0 at once and nothing moves. Then C, now the oldest and the coordinator's node,
 *   gets SIGTERM: its shards are handed off to D, it exits 0, and all 100 counters answer
 *   from D.
 * After each step: every message of every sender reached its counter exactly once
 * (checkDelivery over all incarnations); never two live incarnations.
 *
 * Order per sender is asserted (here and in S7). These tests found the race it needs:
 * a message a sender's region forwarded to the old owner just before BeginHandOff could
 * reach the new owner after the sender's later, buffered messages. The region now sends
 * its BeginHandOffAck through the old owner, behind those messages (the hand-off barrier,
 * docs/sharding-region.md), so they reach the shard before the hand-off does.
 */
import { afterAll, describe, expect, it } from "vitest";
import { murmur3ShardId } from "../../src/core/sharding/shard-id.js";
import { installChildTeardown } from "../support/child-teardown.js";
import { waitAllUp } from "./cluster-node.js";
import {
  cmd,
  currentRegions,
  expectAllDelivered,
  getReports,
  ids,
  incarnationViolations,
  joinNow,
  regionState,
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
const SHARDS = 10;
const counter: EntityTypeConfig = {
  name: TYPE,
  numberOfShards: SHARDS,
  settings: { coordinator: { rebalanceIntervalMs: 3_600_000 } },
};
const ENTITIES = ids("l", 100);
const USED_SHARDS = new Set(ENTITIES.map((id) => murmur3ShardId(id, SHARDS))).size;
const LOAD_INTERVAL_MS = 100;
/** Bound on a graceful leave / shutdown: hand-off, leave, removal, exit, on a busy box. */
const EXIT_TIMEOUT_MS = 20_000;
const DELIVERY_TIMEOUT_MS = 8_000;

let a: ShardingNode;
let b: ShardingNode;
let c: ShardingNode;
let d: ShardingNode;
let e: ShardingNode;
let all: ShardingNode[];
const sent: Record<string, SentCounts> = {};

async function startLoad(nodes: readonly ShardingNode[]): Promise<void> {
  for (const n of nodes) await cmd(n, "load", { ids: ENTITIES, intervalMs: LOAD_INTERVAL_MS });
}

async function stopLoad(nodes: readonly ShardingNode[]): Promise<void> {
  for (const n of nodes) sent[n.hostPort] = (await cmd(n, "load-stop")).sent as SentCounts;
}

async function exitOf(node: ShardingNode) {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, fail) => {
    timer = setTimeout(
      () => fail(new Error(`${node.name} did not exit within ${EXIT_TIMEOUT_MS} ms`)),
      EXIT_TIMEOUT_MS,
    );
  });
  try {
    return await Promise.race([node.child.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function allocated(via: ShardingNode): Promise<Map<string, string[]>> {
  return until(
    async () => {
      const s = shardsByHost(await shardingStats(via, 2_000));
      return [...s.values()].reduce((x, l) => x + l.length, 0) === USED_SHARDS ? s : undefined;
    },
    10_000,
    `all ${USED_SHARDS} shards in use allocated`,
  );
}

describe("S real: leaving and graceful shutdown (A, B, C, D; E joins later)", () => {
  const t0 = Date.now();
  afterAll(() => console.log(`[S leave] whole file ${Date.now() - t0} ms`));

  it("S8: A (coordinator's node) and B leave at once: only their shards move; every counter stays reachable", async () => {
    const started = await startShardingNodes(
      ["A", "B", "C", "D", "E"].map((name) => ({
        name,
        types: [counter],
        joinLater: name === "E",
      })),
      4,
    );
    all = started.nodes;
    [a, b, c, d, e] = all as [ShardingNode, ShardingNode, ShardingNode, ShardingNode, ShardingNode];
    await waitAllUp([a, b, c, d], [a, b, c, d]);
    await until(
      async () => ((await currentRegions(d)).length === 4 ? true : undefined),
      10_000,
      "4 regions registered",
    );
    await startLoad([c, d]);
    const before = await allocated(d);
    for (const n of [a, b, c, d])
      expect(before.get(n.hostPort)?.length ?? 0, `${n.name} hosts shards`).toBeGreaterThan(0);

    const leftAt = Date.now();
    await cmd(a, "leave");
    await cmd(d, "leave", { address: b.hostPort });
    const exits = await Promise.all([exitOf(a), exitOf(b)]);
    expect(exits).toEqual([
      { code: 0, signal: null },
      { code: 0, signal: null },
    ]);
    const exitedMs = Date.now() - leftAt;
    for (const n of [a, b])
      expect(n.child.events.find((x) => x.event === "shutdown-started")?.reason).toBe(
        "cluster-leaving",
      );
    await waitAllUp([c, d], [c, d], EXIT_TIMEOUT_MS);
    // The load keeps every shard in use: A's and B's get new homes on C and D.
    const after = await allocated(d);
    for (const n of [c, d])
      expect(after.get(n.hostPort), `${n.name} keeps its shards`).toEqual(
        expect.arrayContaining(before.get(n.hostPort) ?? []),
      );
    expect([...after.keys()].sort()).toEqual([c.hostPort, d.hostPort].sort());
    await stopLoad([c, d]);
    const { reports, reordered } = await expectAllDelivered(
      all,
      d,
      TYPE,
      ENTITIES,
      sent,
      DELIVERY_TIMEOUT_MS,
      "strict",
    );
    for (const r of reports) expect([c.hostPort, d.hostPort]).toContain(r.node);
    expect(incarnationViolations(all, TYPE)).toEqual([]);
    const moved = [a, b].flatMap((n) => n.child.events.filter((x) => x.event === "entity-stopped"));
    console.log(
      `[S8] A and B left -> both exited 0 after ${exitedMs} ms; shards ${[a, b, c, d].map((n) => `${n.name} ${before.get(n.hostPort)?.length ?? 0}`).join(", ")} -> C ${after.get(c.hostPort)?.length}, D ${after.get(d.hostPort)?.length}; ${moved.length} entities handed off; nothing lost; ${reordered} reordered`,
    );
  }, 45_000);

  it("S9: SIGTERM of an empty region and of the oldest node (coordinator): shards handed off first; 100 counters reachable; nothing lost, order kept", async () => {
    // E joins: every shard in use has a home and rebalance is off: E stays empty.
    await joinNow(e, c.hostPort);
    await waitAllUp([c, d, e], [c, d, e]);
    await until(
      async () => ((await currentRegions(d)).length === 3 ? true : undefined),
      10_000,
      "E's region registered",
    );
    expect((await regionState(e)).shards).toEqual([]);
    await startLoad([d]);
    const stopsBefore = all
      .flatMap((n) => n.child.events)
      .filter((x) => x.event === "entity-stopped").length;
    let at = Date.now();
    e.child.process.kill("SIGTERM");
    expect(await exitOf(e)).toEqual({ code: 0, signal: null });
    const emptyMs = Date.now() - at;
    expect(e.child.events.find((x) => x.event === "shutdown-started")?.reason).toBe("sigterm");
    await waitAllUp([c, d], [c, d], EXIT_TIMEOUT_MS);
    expect(
      all.flatMap((n) => n.child.events).filter((x) => x.event === "entity-stopped").length,
      "nothing moved when the empty region went",
    ).toBe(stopsBefore);

    // C is the oldest now: it runs the coordinator.
    const onC = (await regionState(c)).shards.length;
    expect(onC).toBeGreaterThan(0);
    at = Date.now();
    c.child.process.kill("SIGTERM");
    expect(await exitOf(c)).toEqual({ code: 0, signal: null });
    const oldestMs = Date.now() - at;
    expect(c.child.events.find((x) => x.event === "shutdown-started")?.reason).toBe("sigterm");
    // Every counter C hosted stopped there before the process exited (handed off).
    const liveOnC = c.child.events.filter((x) => x.event === "entity-started").length;
    expect(c.child.events.filter((x) => x.event === "entity-stopped").length).toBe(liveOnC);
    await waitAllUp([d], [d], EXIT_TIMEOUT_MS);
    await new Promise((r) => setTimeout(r, 300));
    await stopLoad([d]);
    const reports = await getReports(d, ENTITIES, { retryForMs: 5_000 });
    for (const r of reports) expect(r.node).toBe(d.hostPort);
    const { reordered } = await expectAllDelivered(
      all,
      d,
      TYPE,
      ENTITIES,
      sent,
      DELIVERY_TIMEOUT_MS,
      "strict",
    );
    expect(incarnationViolations(all, TYPE)).toEqual([]);
    const total = Object.values(sent)
      .flatMap((m) => Object.values(m))
      .reduce((x, y) => x + y, 0);
    console.log(
      `[S9] SIGTERM: empty region E exited 0 after ${emptyMs} ms; oldest C (coordinator, ${onC} shards) exited 0 after ${oldestMs} ms; ${total} messages to ${ENTITIES.length} counters all delivered once (${reordered} reordered over the whole file)`,
    );
  }, 45_000);
});
