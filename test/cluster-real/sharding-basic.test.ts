/**
 * Scenario S1, S2, S3, S4, S15, S16 (real; docs/scenarios.md): sharded counters in three Node processes on
 * 127.0.0.1 (sharding-node-main.ts), one cluster grown step by step; the steps run in
 * order and share it (teardown per file):
 *
 * - S1: A alone; 20 counters are created on their first message, get every message,
 *   GetShardRegionState lists them.
 * - S2: B joins (seed A): new shards go to B (A's shards stay: rebalance is off here);
 *   messages from A and from B reach the same incarnation.
 * - S3: C joins without the "worker" role: its proxy routes to A and B, never hosts.
 * - S4: passivation: `passivate` stops an entity; messages sent right behind it start a
 *   new incarnation (none lost); idle entities of "Idle" (passivateIdleAfterMs 1 s) stop
 *   after about 1 s, a busy one does not.
 * - S15: region state, current regions, cluster stats and entity location agree with the
 *   entity lines; a region that does not answer (its node SIGKILLed) is listed as failed.
 * - S16: "Ghost" (role nobody has) and "Half" (not started on A, the oldest, where its
 *   coordinator must run): repeated warnings naming the cause; nobody crashes.
 * Throughout: never two live incarnations of an entity (incarnationViolations), and every
 * message of every sender delivered exactly once, in order (checkDelivery).
 */
import { afterAll, describe, expect, it } from "vitest";
import { installChildTeardown } from "../support/child-teardown.js";
import { freePorts, seedNodesOf, waitAllUp } from "./cluster-node.js";
import {
  cmd,
  currentRegions,
  entityLocation,
  expectAllDelivered,
  getReports,
  ids,
  incarnationViolations,
  killNode,
  liveOn,
  regionHost,
  regionState,
  type SentCounts,
  type ShardingNode,
  shardingStats,
  shardsByHost,
  startedOn,
  startShardingNode,
  stopLines,
  tell,
  until,
  waitForLogLines,
} from "./sharding-node.js";
import type { EntityTypeConfig } from "./sharding-node-main.js";

installChildTeardown("perFile");

/** Bound on a region registering and the coordinator seeing it. */
const REGISTER_TIMEOUT_MS = 10_000;
const DELIVERY_TIMEOUT_MS = 5_000;
const IDLE_MS = 1_000;
const WARN_INTERVAL_MS = 1_000;

const COUNTER = "Counter";
/** Rebalance off (an hour): S2 checks that A keeps its shards while B gets new ones. */
const counter: EntityTypeConfig = {
  name: COUNTER,
  role: "worker",
  numberOfShards: 40,
  settings: { coordinator: { rebalanceIntervalMs: 3_600_000 } },
};
const idle: EntityTypeConfig = {
  name: "Idle",
  role: "worker",
  numberOfShards: 4,
  settings: { shard: { passivateIdleAfterMs: IDLE_MS, passivateIdleSweepIntervalMs: 200 } },
};
const ghost: EntityTypeConfig = {
  name: "Ghost",
  role: "nobody",
  numberOfShards: 4,
  settings: { region: { warnIntervalMs: WARN_INTERVAL_MS } },
};
const half: EntityTypeConfig = {
  name: "Half",
  numberOfShards: 4,
  settings: { region: { warnIntervalMs: WARN_INTERVAL_MS } },
};

let a: ShardingNode;
let b: ShardingNode;
let c: ShardingNode;
const sent: Record<string, SentCounts> = {};
const allIds = new Set<string>();

async function send(
  from: ShardingNode,
  entityIds: readonly string[],
  opts: { n?: number; times?: number } = {},
) {
  for (const id of entityIds) allIds.add(id);
  sent[from.hostPort] = await tell(from, entityIds, opts);
}

async function waitForRegions(n: number): Promise<string[]> {
  const deadline = Date.now() + REGISTER_TIMEOUT_MS;
  for (;;) {
    const regions = await currentRegions(a).catch(() => [] as string[]);
    if (regions.length === n) return regions;
    if (Date.now() > deadline)
      throw new Error(`coordinator lists ${JSON.stringify(regions)}, expected ${n} regions`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("S real: sharding basics on one growing cluster (A, B workers; C proxy)", () => {
  const t0 = Date.now();
  afterAll(() => console.log(`[S basic] whole file ${Date.now() - t0} ms`));

  it("S1: a single node creates entities on first message and delivers every message", async () => {
    const ports = await freePorts(3);
    const seeds = seedNodesOf(ports.slice(0, 1));
    a = await startShardingNode(
      { name: "A", roles: ["worker"], types: [counter, idle, ghost] },
      ports[0] as number,
      seeds,
    );
    await waitAllUp([a], [a]);
    // B and C start now (their tsx start-up overlaps S1); they join once up.
    const starting = Promise.all([
      startShardingNode(
        { name: "B", roles: ["worker"], types: [counter, idle, ghost, half] },
        ports[1] as number,
        seeds,
      ),
      startShardingNode(
        { name: "C", types: [counter, idle, ghost, half] },
        ports[2] as number,
        seeds,
      ),
    ]);
    const one = ids("one", 20);
    expect(startedOn(a, COUNTER), "no entity before its first message").toEqual([]);
    await send(a, one, { n: 2, times: 3 });
    const reports = await getReports(a, one);
    for (const r of reports) {
      expect(r.total, r.id).toBe(6);
      expect(r.node).toBe(a.hostPort);
      expect(r.senders[a.hostPort]).toMatchObject({ first: 1, last: 3, count: 3, bad: 0, dup: 0 });
    }
    expect(
      startedOn(a, COUNTER)
        .map((e) => e.id)
        .sort(),
    ).toEqual([...one].sort());
    const st = await regionState(a);
    expect(regionHost(st.region)).toBe(a.hostPort);
    expect(st.shards.flatMap((s) => s.entityIds).sort()).toEqual([...one].sort());
    [b, c] = await starting;
  }, 30_000);

  it("S2: B joins: new shards go to it; messages from A and B reach the same incarnation", async () => {
    await waitAllUp([a, b, c], [a, b, c]);
    await waitForRegions(2);
    const before = shardsByHost(await shardingStats(a, 2_000)).get(a.hostPort) ?? [];
    const two = ids("two", 40);
    await send(a, two, { n: 1 });
    await send(b, two, { n: 10 });
    // Every add reached its counter (B's adds to A's shards may still travel: poll).
    await expectAllDelivered([a, b, c], a, COUNTER, two, sent, DELIVERY_TIMEOUT_MS);
    const fromA = await getReports(a, two);
    const fromB = await getReports(b, two);
    const hosts = new Set<string>();
    for (const [i, r] of fromA.entries()) {
      expect(fromB[i], `${r.id} seen from B`).toEqual(r);
      expect(r.total).toBe(11);
      hosts.add(r.node);
    }
    expect([...hosts].sort()).toEqual([a.hostPort, b.hostPort].sort());
    const after = shardsByHost(await shardingStats(a, 2_000));
    expect(after.get(a.hostPort), "A keeps its shards").toEqual(expect.arrayContaining(before));
    const onB = after.get(b.hostPort) ?? [];
    expect(onB.length).toBeGreaterThan(0);
    expect(
      onB.filter((s) => before.includes(s)),
      "B only got shards A never had",
    ).toEqual([]);
    console.log(
      `[S2] shards: A ${before.length} before, ${after.get(a.hostPort)?.length} after; B ${onB.length}`,
    );
  }, 30_000);

  it("S3: the proxy on C routes to A and B and never hosts a shard", async () => {
    const three = ids("three", 20);
    await send(c, [...three, "one-0", "two-0"]);
    const reports = await getReports(c, [...three, "one-0", "two-0"]);
    for (const r of reports) {
      expect([a.hostPort, b.hostPort]).toContain(r.node);
      expect(r.senders[c.hostPort]?.count, r.id).toBe(1);
    }
    expect((await regionState(c)).shards).toEqual([]);
    expect(startedOn(c, COUNTER)).toEqual([]);
    expect((await currentRegions(c)).map(regionHost).sort()).toEqual(
      [a.hostPort, b.hostPort].sort(),
    );
  }, 20_000);

  it("S4: passivate stops an entity, messages behind it start a new incarnation; idle entities passivate", async () => {
    // Manual: `passivate`; once the entity asked its shard to passivate it (it then lingers
    // 500 ms before it stops), 5 adds: the shard buffers them and they start the next
    // incarnation, all 5, in order.
    const [before] = await getReports(b, ["two-1"]);
    await cmd(b, "passivate", { ids: ["two-1"] });
    const passivating = await until(
      () =>
        [a, b]
          .flatMap((n) => n.child.events)
          .find((e) => e.event === "passivating" && e.inc === before?.inc),
      5_000,
      "two-1 passivating",
    );
    await send(b, ["two-1"], { times: 5 });
    const addsSentAt = Date.now();
    const [oldStop] = await until(
      () => {
        const l = stopLines([a, b], (e) => e.inc === before?.inc);
        return l.length > 0 ? l : undefined;
      },
      5_000,
      "the passivated incarnation of two-1 to stop",
    );
    const [after] = await getReports(b, ["two-1"]);
    expect(after?.inc).not.toBe(before?.inc);
    expect(oldStop?.count, "the old incarnation got nothing after passivate").toBe(before?.count);
    expect(after?.senders[b.hostPort], "the new incarnation got the 5 adds").toMatchObject({
      count: 5,
      bad: 0,
    });
    console.log(
      `[S4] passivating -> adds sent ${addsSentAt - Number(passivating.t)} ms, -> old incarnation stopped ${Number(oldStop?.t) - Number(passivating.t)} ms`,
    );
    // Passivate alone: stopped; the next message starts a new incarnation from 0.
    await cmd(c, "passivate", { ids: ["one-1"] });
    const [old] = await until(
      () => {
        const l = stopLines([a, b], (e) => e.id === "one-1");
        return l.length > 0 ? l : undefined;
      },
      5_000,
      "one-1 to stop after passivate",
    );
    expect(old?.total).toBe(6);
    const [fresh] = await getReports(c, ["one-1"]);
    expect(fresh?.total).toBe(0);
    expect(stopLines([a, b], (e) => e.id === "one-1")).toHaveLength(1);

    // Idle passivation: idle-0..2 get one message; busy-0 gets one every 100 ms for 2.5 s
    // (sent by A's own timer, so a slow test runner cannot make it look idle).
    const idleIds = ids("idle", 3);
    await tell(a, idleIds, { type: "Idle" });
    const sentAt = Date.now();
    await cmd(a, "load", { type: "Idle", ids: ["busy-0"], intervalMs: 100 });
    await new Promise((r) => setTimeout(r, 2_500));
    const busySent = ((await cmd(a, "load-stop", { type: "Idle" })).sent as SentCounts)["busy-0"];
    const busyUntil = Date.now();
    const idleStops = await until(
      () => {
        const l = stopLines([a, b], (e) => e.type === "Idle" && idleIds.includes(String(e.id)));
        return l.length === idleIds.length ? l : undefined;
      },
      5_000,
      "idle-0..2 passivated",
    );
    for (const e of idleStops) {
      const afterMs = Number(e.t) - sentAt;
      expect(afterMs, `${e.id} idle-stopped after`).toBeGreaterThanOrEqual(IDLE_MS - 100);
      expect(afterMs).toBeLessThan(IDLE_MS + 3_000);
      expect(e.count).toBe(1);
    }
    const busyStops = () => stopLines([a, b], (e) => e.type === "Idle" && e.id === "busy-0");
    expect(
      busyStops().filter((e) => Number(e.t) < busyUntil - IDLE_MS),
      "busy-0 not passivated while busy",
    ).toEqual([]);
    const [busyStop] = await until(
      () => (busyStops().length > 0 ? busyStops() : undefined),
      IDLE_MS + 5_000,
      "busy-0 passivated once idle",
    );
    expect(busyStop?.count, "busy-0's one incarnation got every message").toBe(busySent);
    expect(incarnationViolations([a, b, c], "Idle")).toEqual([]);
  }, 20_000);

  it("S15: region state, current regions, stats and entity location agree with the entities", async () => {
    await expectAllDelivered([a, b, c], a, COUNTER, [...allIds], sent, DELIVERY_TIMEOUT_MS);
    expect(incarnationViolations([a, b, c], COUNTER)).toEqual([]);
    const liveA = liveOn(a, COUNTER).sort();
    const liveB = liveOn(b, COUNTER).sort();
    expect(liveA.length + liveB.length).toBe(allIds.size);
    const stA = await regionState(a);
    const stB = await regionState(b);
    expect(stA.shards.flatMap((s) => s.entityIds).sort()).toEqual(liveA);
    expect(stB.shards.flatMap((s) => s.entityIds).sort()).toEqual(liveB);
    for (const n of [a, b, c])
      expect((await currentRegions(n)).sort()).toEqual([stA.region, stB.region].sort());
    const stats = await shardingStats(c, 2_000);
    expect(stats.failed).toEqual([]);
    const count = (region: string) =>
      Object.values(stats.regions.find((r) => r.region === region)?.shards ?? {}).reduce(
        (x, y) => x + y,
        0,
      );
    expect(count(stA.region)).toBe(liveA.length);
    expect(count(stB.region)).toBe(liveB.length);
    const onB = liveB[0] as string;
    const loc = await entityLocation(c, onB);
    expect(loc).toMatchObject({ entityId: onB, region: stB.region, alive: true });
    expect(stB.shards.find((s) => s.entityIds.includes(onB))?.shardId).toBe(loc.shardId);
    const never = await entityLocation(a, "never-used-entity-id");
    expect(never.alive).toBe(false);
  }, 20_000);

  it("S16: a role nobody has, and sharding not started on the coordinator's node: repeated warnings naming the cause; no crash", async () => {
    // "Ghost": role "nobody": no member may run its coordinator.
    await tell(a, ["g-1"], { type: "Ghost" });
    for (const n of [a, b, c]) {
      const lines = await waitForLogLines(n, /"Ghost"/, 2, 4 * WARN_INTERVAL_MS);
      expect(String(lines.at(-1)?.msg)).toContain('role "nobody"');
    }
    const buffered = await waitForLogLines(
      a,
      /"Ghost".*[1-9]\d* message\(s\) buffered/,
      1,
      3 * WARN_INTERVAL_MS,
    );
    console.log(`[S16] A: ${String(buffered[0]?.msg)}`);
    // "Half": started on B and C, not on A (the oldest, where its coordinator runs).
    await tell(b, ["h-1"], { type: "Half" });
    await waitForLogLines(b, /"Half".*1 message\(s\) buffered/, 1, 3 * WARN_INTERVAL_MS);
    for (const n of [b, c]) {
      const lines = await waitForLogLines(n, /"Half"/, 2, 4 * WARN_INTERVAL_MS);
      console.log(`[S16] ${n.name}: ${String(lines.at(-1)?.msg)}`);
      expect(String(lines.at(-1)?.msg)).toContain(
        'sharding for "Half" is not started on the oldest member',
      );
    }
    for (const n of [a, b, c]) {
      expect(n.child.exit, `${n.name} still running`).toBeUndefined();
      expect((await cmd(n, "state")).ok).toBe(true);
    }
    // The counters keep working meanwhile.
    expect((await getReports(c, ["one-0"]))[0]?.total).toBe(7);
  }, 20_000);

  it("S15: a region that does not answer (its node SIGKILLed) is listed as failed, not left out", async () => {
    const stA = await regionState(a);
    const stB = await regionState(b);
    await killNode(b);
    const stats = await shardingStats(a, 500);
    expect(stats.failed).toEqual([stB.region]);
    expect(stats.regions.map((r) => r.region)).toEqual([stA.region]);
  }, 15_000);
});
