/**
 * Scenario S7 and S5 (real; docs/scenarios.md): sharded counters in three Node processes on 127.0.0.1
 * (sharding-node-main.ts); the two steps run in order on one cluster (teardown per file).
 *
 * - S7: A and B carry the shards (of 12) of 60 counters while both send one add to every counter
 *   every 100 ms; C joins. Shards move to C (rebalance every 500 ms, one shard a round)
 *   until the spread is within the least-shard strategy's limit (max - min <= 1). Every
 *   message sent meanwhile reaches its counter exactly once and in the order its sender
 *   sent it (checkDelivery over all incarnations, order strict: the hand-off barrier,
 *   see sharding-leave.test.ts); never two live incarnations.
 * - S5: C, hosting shards now, is killed with SIGKILL; once the survivors have downed it,
 *   its shards are allocated again and every counter answers from A or B. The time from
 *   the kill to the last answer is printed.
 */
import { afterAll, describe, expect, it } from "vitest";
import { murmur3ShardId } from "../../src/core/sharding/shard-id.js";
import { installChildTeardown } from "../support/child-teardown.js";
import { waitAllUp } from "./cluster-node.js";
import { SBR_STABLE_AFTER_MS } from "./fast-settings.js";
import {
  cmd,
  currentRegions,
  expectAllDelivered,
  getReports,
  ids,
  incarnationViolations,
  joinNow,
  killNode,
  liveOn,
  type SentCounts,
  type ShardingNode,
  shardingStats,
  shardsByHost,
  startedOn,
  startShardingNodes,
  until,
} from "./sharding-node.js";
import type { EntityTypeConfig } from "./sharding-node-main.js";

installChildTeardown("perFile");

const TYPE = "Counter";
const SHARDS = 12;
const counter: EntityTypeConfig = {
  name: TYPE,
  numberOfShards: SHARDS,
  settings: { coordinator: { rebalanceIntervalMs: 500 } },
};
const ENTITIES = ids("c", 60);
/** The shards the counters fall in (the default hash): every one gets a home. */
const USED_SHARDS = new Set(ENTITIES.map((id) => murmur3ShardId(id, SHARDS))).size;
const LOAD_INTERVAL_MS = 100;
/** Bound on the rebalance after C joined: 6 rounds of 500 ms, hand-offs, a busy box. */
const REBALANCE_TIMEOUT_MS = 20_000;
const DELIVERY_TIMEOUT_MS = 8_000;
/**
 * Bound on kill -> every counter answers again: unreachable (~1.5 s), SBR stable-after,
 * removal, re-allocation, plus slack for a loaded 2-core box.
 */
const RECOVERY_BOUND_MS = SBR_STABLE_AFTER_MS + 15_000;

let a: ShardingNode;
let b: ShardingNode;
let c: ShardingNode;

describe("S real: rebalance and failover (A, B; then C joins and is killed)", () => {
  const t0 = Date.now();
  afterAll(() => console.log(`[S failover] whole file ${Date.now() - t0} ms`));

  it("S7: C joins a loaded cluster; shards move to it until balanced; no message lost or reordered", async () => {
    const started = await startShardingNodes(
      [
        { name: "A", types: [counter] },
        { name: "B", types: [counter] },
        { name: "C", types: [counter], joinLater: true },
      ],
      2,
    );
    [a, b, c] = started.nodes as [ShardingNode, ShardingNode, ShardingNode];
    await waitAllUp([a, b], [a, b]);
    await until(
      async () => ((await currentRegions(a)).length === 2 ? true : undefined),
      10_000,
      "A and B registered",
    );
    for (const n of [a, b]) await cmd(n, "load", { ids: ENTITIES, intervalMs: LOAD_INTERVAL_MS });
    // Every shard gets a home on A or B under load.
    await until(
      async () => {
        const s = shardsByHost(await shardingStats(a, 2_000));
        const n = [...s.values()].reduce((x, l) => x + l.length, 0);
        return n === USED_SHARDS ? s : undefined;
      },
      10_000,
      `all ${USED_SHARDS} shards in use allocated`,
    );

    const joinedAt = Date.now();
    await joinNow(c, started.seedNodes[0] as string);
    await waitAllUp([a, b, c], [a, b, c]);
    const spread = await until(
      async () => {
        const s = shardsByHost(await shardingStats(a, 2_000));
        const counts = [a, b, c].map((n) => s.get(n.hostPort)?.length ?? 0);
        const total = counts.reduce((x, y) => x + y, 0);
        return total === USED_SHARDS && Math.max(...counts) - Math.min(...counts) <= 1
          ? counts
          : undefined;
      },
      REBALANCE_TIMEOUT_MS,
      "shards spread over A, B, C within 1",
    );
    const balancedAt = Date.now();
    // Some load after the last move, then stop it and account for every message.
    await new Promise((r) => setTimeout(r, 300));
    const sent: Record<string, SentCounts> = {};
    for (const n of [a, b]) sent[n.hostPort] = (await cmd(n, "load-stop")).sent as SentCounts;
    const { reordered } = await expectAllDelivered(
      [a, b, c],
      a,
      TYPE,
      ENTITIES,
      sent,
      DELIVERY_TIMEOUT_MS,
      "strict",
    );
    expect(incarnationViolations([a, b, c], TYPE)).toEqual([]);
    expect(startedOn(c, TYPE).length, "entities run on C").toBeGreaterThan(0);
    const moved = [a, b].flatMap((n) => n.child.events.filter((e) => e.event === "entity-stopped"));
    const perSender = Object.values(sent).map((m) => Object.values(m).reduce((x, y) => x + y, 0));
    console.log(
      `[S7] C joined -> spread ${spread.join("/")} in ${balancedAt - joinedAt} ms; ${moved.length} entity incarnations handed off; ${perSender.join(" + ")} messages, all delivered once; ${reordered} reordered`,
    );
  }, 45_000);

  it("S5: C (hosting shards) is killed -9: after downing its shards move and every counter answers again", async () => {
    const onC = liveOn(c, TYPE);
    expect(onC.length, "C hosts entities").toBeGreaterThan(0);
    const killedAt = Date.now();
    await killNode(c);
    const reports = await getReports(b, ENTITIES, {
      timeoutMs: 1_000,
      retryForMs: RECOVERY_BOUND_MS,
    });
    const recoveredMs = Date.now() - killedAt;
    for (const r of reports) expect([a.hostPort, b.hostPort], r.id).toContain(r.node);
    // C's counters start again from 0 (memory only); the others kept their state.
    for (const r of reports)
      if (!onC.includes(r.id)) expect(r.count, `${r.id} kept its count`).toBeGreaterThan(0);
    expect(incarnationViolations([a, b, c], TYPE)).toEqual([]);
    const removed = [a, b].map((n) =>
      n.child.events.find(
        (e) => e.event === "cluster" && e.type === "member-removed" && e.member === c.hostPort,
      ),
    );
    console.log(
      `[S5] kill -9 of C (${onC.length} entities) -> removed ${removed.map((e) => (e === undefined ? "?" : Number(e.t) - killedAt)).join("/")} ms -> all ${ENTITIES.length} counters answer from A/B after ${recoveredMs} ms`,
    );
    expect(recoveredMs).toBeLessThan(RECOVERY_BOUND_MS);
  }, 45_000);
});
