/**
 * The metrics that close the last gaps of issue 18 (docs/observability.md, "Metric list"),
 * on simulated clusters: messages held by shards (apart from the regions' buffers), reconnect
 * attempts per peer (series removed with the member), recovery time per sharded entity type,
 * and hand-offs the coordinator abandons because the old home's member was removed.
 */
import { describe, expect, it } from "vitest";
import {
  type ActorRef,
  Behaviors,
  Effect,
  EventSourcedBehavior,
  persistenceIdOf,
} from "../../src/actor/index.js";
import {
  ClusterNode,
  ClusterSharding,
  EntityTypeKey,
  type ShardHandOff,
} from "../../src/api/index.js";
import { metricsOf, prometheusText } from "../../src/observability/index.js";
import { MemoryJournal } from "../../src/persistence/memory/memory-journal.js";
import { MemoryLeaseStore } from "../../src/persistence/memory/memory-lease.js";
import { SimNetwork, SimWorld } from "../../src/runtime/sim/index.js";
import { FAST } from "../cluster/sim-cluster.js";
import { allUp, crashNode, simSharding, startNode } from "../sharding/sim-sharding.js";

/** The value of the series `series` (name and labels as written) in `text`, 0 when absent. */
function sampleOf(text: string, series: string): number {
  for (const line of text.split("\n"))
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  return 0;
}

function scrape(node: ClusterNode): string {
  return prometheusText(metricsOf(node).registry.collect());
}

/** One member (seeding from `seeds`), with its metrics wired before any type starts. */
async function member(
  world: SimWorld,
  network: SimNetwork,
  name: string,
  seeds: string[],
): Promise<ClusterNode> {
  let node: ClusterNode | undefined;
  void ClusterNode.start({
    systemName: "shop",
    host: name,
    port: 2552,
    seedNodes: seeds,
    settings: FAST,
    failureDetector: { acceptableHeartbeatPauseMs: 1_000, firstHeartbeatEstimateMs: 200 },
    downing: { stableAfterMs: 2_000 },
    runtime: world.createRuntime(name),
    transport: network.transportFor(name),
  }).then((n) => {
    metricsOf(n);
    node = n;
  });
  expect(await world.runUntil(() => node !== undefined, 10_000)).toBe(true);
  return node as ClusterNode;
}

/** An event-sourced counter that answers `get` with its count (no events needed). */
type Ledger = { type: "get"; replyTo: ActorRef<number> };
const LedgerKey = EntityTypeKey<Ledger>("Ledger");

function ledger(journal: MemoryJournal, type: string, id: string) {
  return EventSourcedBehavior.create<Ledger, string, number>({
    persistenceId: persistenceIdOf(type, id),
    emptyState: 0,
    commandHandler: (n, cmd) => Effect.reply(cmd.replyTo, n),
    eventHandler: (n) => n + 1,
    journal,
    eventCodec: {
      encode: () => ({ serializerId: 1, bytes: new Uint8Array(0) }),
      decode: () => "e",
    },
  });
}

type Held = { type: "hold" } | { type: "ignored" } | { type: "msg" };
const HeldKey = EntityTypeKey<Held>("Held");

type Sticky = { type: "touch" } | { type: "stop-please" };
const StickyKey = EntityTypeKey<Sticky>("Sticky");
/** Long enough that neither the shard nor the coordinator gives up during the test. */
const HAND_OFF_TIMEOUT_MS = 120_000;

describe("node metrics: shard buffers, reconnects per peer, recovery per type, abandoned hand-offs", () => {
  it("counts the messages a shard holds for a passivating entity apart from the region's", {
    timeout: 30_000,
  }, async () => {
    const world = new SimWorld({ seed: 1 });
    const network = new SimNetwork(world);
    const a = await member(world, network, "a", ["a:2552"]);
    expect(await world.runUntil(() => allUp(a, 1), 10_000)).toBe(true);
    const sharding = ClusterSharding.get(a);
    sharding.init({
      typeKey: HeldKey,
      numberOfShards: 4,
      // "hold": the entity asks to passivate with a stop message it ignores, so it stays
      // passivating and its shard holds every later message for it
      createBehavior: (ctx) =>
        Behaviors.receiveMessage<Held>((m) => {
          if (m.type === "hold") ctx.passivate({ type: "ignored" });
        }),
    });
    const inShards = 'shardkit_sharding_shard_buffered_messages{type="Held"}';
    const inRegions = 'shardkit_sharding_buffered_messages{type="Held"}';
    const e1 = sharding.entityRefFor(HeldKey, "e1");
    e1.tell({ type: "hold" });
    await world.advance(2_000);
    expect(scrape(a)).toContain(`${inShards} 0`);
    for (let i = 0; i < 3; i++) e1.tell({ type: "msg" });
    await world.advance(500);
    const text = scrape(a);
    expect(sampleOf(text, inShards)).toBe(3);
    expect(sampleOf(text, inRegions)).toBe(0); // the shard's home is known: not the region's
  });

  it("counts the messages a shard holds while it awaits its lease, and none once it holds it", {
    timeout: 30_000,
  }, async () => {
    const world = new SimWorld({ seed: 1 });
    const network = new SimNetwork(world);
    const a = await member(world, network, "a", ["a:2552"]);
    expect(await world.runUntil(() => allUp(a, 1), 10_000)).toBe(true);
    const leases = new MemoryLeaseStore(a.system.core.clock);
    // no shard gets its lease (the coordinator's own lease, "Held.coordinator", still works)
    leases.setUnavailable(true, "Held/");
    const got: string[] = [];
    const sharding = ClusterSharding.get(a);
    sharding.init({
      typeKey: HeldKey,
      numberOfShards: 4,
      lease: { provider: leases },
      createBehavior: (ctx) =>
        Behaviors.receiveMessage<Held>(() => {
          got.push(ctx.entityId);
        }),
    });
    const inShards = 'shardkit_sharding_shard_buffered_messages{type="Held"}';
    for (const id of ["p", "q", "r"]) sharding.entityRefFor(HeldKey, id).tell({ type: "msg" });
    await world.advance(3_000);
    expect(got).toEqual([]);
    expect(sampleOf(scrape(a), inShards)).toBe(3);
    expect(sampleOf(scrape(a), 'shardkit_sharding_buffered_messages{type="Held"}')).toBe(0);
    leases.setUnavailable(false, "Held/");
    expect(await world.runUntil(() => got.length === 3, 10_000)).toBe(true);
    expect(sampleOf(scrape(a), inShards)).toBe(0);
  });

  it("counts reconnect attempts per peer, sums them in the node-wide total, drops them when the peer is removed", {
    timeout: 60_000,
  }, async () => {
    const world = new SimWorld({ seed: 1 });
    const network = new SimNetwork(world);
    const seeds = ["a:2552", "b:2552", "c:2552"];
    const nodes: ClusterNode[] = [];
    for (const name of ["a", "b", "c"]) nodes.push(await member(world, network, name, seeds));
    expect(await world.runUntil(() => nodes.every((n) => allUp(n, 3)), 30_000)).toBe(true);
    const a = nodes[0] as ClusterNode;
    const ofC = 'shardkit_remote_association_reconnects_total{member="shop@c:2552"}';
    const reconnectsToC = () => sampleOf(scrape(a), ofC);
    // (a may have retried c's seed address before c listened)
    const before = reconnectsToC();
    network.crash("c");
    world.getRuntime("c")?.scheduler.cancelAll();
    expect(await world.runUntil(() => reconnectsToC() >= before + 2, 20_000)).toBe(true);
    const text = scrape(a);
    expect(sampleOf(text, "shardkit_remote_reconnects_total")).toBe(
      reconnectsToC() +
        sampleOf(text, 'shardkit_remote_association_reconnects_total{member="shop@b:2552"}'),
    );
    // c is downed and removed: its series goes, and stays gone while a still reconnects
    const removed = () => a.cluster.state.members.length === 2;
    expect(await world.runUntil(removed, 30_000)).toBe(true);
    await world.advance(10_000);
    expect(scrape(a)).not.toContain("shop@c:2552");
  });

  it("labels recovery durations with the sharded entity type, and with an empty type outside sharding", {
    timeout: 30_000,
  }, async () => {
    const world = new SimWorld({ seed: 1 });
    const network = new SimNetwork(world);
    const a = await member(world, network, "a", ["a:2552"]);
    expect(await world.runUntil(() => allUp(a, 1), 10_000)).toBe(true);
    const journal = new MemoryJournal();
    const sharding = ClusterSharding.get(a);
    sharding.init({
      typeKey: LedgerKey,
      numberOfShards: 4,
      createBehavior: (ctx) => ledger(journal, "Ledger", ctx.entityId),
    });
    let replies = 0;
    for (const id of ["x", "y"])
      void sharding
        .entityRefFor(LedgerKey, id)
        .ask((replyTo: ActorRef<number>) => ({ type: "get", replyTo }), { timeoutMs: 5_000 })
        .then(() => replies++);
    expect(await world.runUntil(() => replies === 2, 10_000)).toBe(true);
    // an event-sourced actor outside sharding
    a.system.spawn(ledger(journal, "Plain", "1"), "plain-ledger");
    await world.advance(100);
    const text = scrape(a);
    expect(
      sampleOf(
        text,
        'shardkit_persistence_recovery_duration_seconds_count{type="Ledger",outcome="recovered"}',
      ),
    ).toBe(2);
    expect(
      sampleOf(
        text,
        'shardkit_persistence_recovery_duration_seconds_count{type="",outcome="recovered"}',
      ),
    ).toBe(1);
  });

  it("counts the hand-offs the coordinator abandons when the old home's member is removed", {
    timeout: 90_000,
  }, async () => {
    const { world, network, oracle } = simSharding(1);
    const seeds = ["a:2552", "b:2552"];
    // a runs the coordinator only; b, then c host the shards
    const told: string[] = [];
    const start = async (name: string, role: string, s: string[]) => {
      const n = await startNode(world, network, name, s, oracle, {
        sharding: false,
        roles: [role],
      });
      metricsOf(n);
      // a second observer next to the metrics' one: each is told
      ClusterSharding.get(n).addLifecycleObserver({
        handOffAbandoned: (type, shard, node, reason, cause) =>
          void told.push(
            `${type} ${shard} ${node.includes("@a:2552") ? "a" : node} ${reason} ${cause}`,
          ),
      });
      ClusterSharding.get(n).init({
        typeKey: StickyKey,
        numberOfShards: 6,
        role: "worker",
        coordinatorRole: "coord",
        // ignored by the entity: a hand-off of its shard never finishes by itself
        handOffStopMessage: { type: "stop-please" } as Sticky,
        settings: {
          coordinator: { rebalanceIntervalMs: 1_000, handOffTimeoutMs: HAND_OFF_TIMEOUT_MS },
          shard: { handOffTimeoutMs: HAND_OFF_TIMEOUT_MS },
        },
        createBehavior: () => Behaviors.receiveMessage<Sticky>(() => {}),
      });
      return n;
    };
    const a = await start("a", "coord", seeds);
    const b = await start("b", "worker", seeds);
    expect(await world.runUntil(() => allUp(a, 2) && allUp(b, 2), 30_000)).toBe(true);
    await world.advance(3_000);
    for (let i = 0; i < 60; i++)
      ClusterSharding.get(a).entityRefFor(StickyKey, `s-${i}`).tell({ type: "touch" });
    await world.advance(3_000);
    const hosted = 'shardkit_sharding_shards{type="Sticky"}';
    expect(sampleOf(scrape(b), hosted)).toBe(6);

    // c joins: the coordinator (on a) starts handing b's shards off to it
    const c = await start("c", "worker", [...seeds]);
    const query = async (): Promise<readonly ShardHandOff[]> => {
      let got: readonly ShardHandOff[] | undefined;
      void ClusterSharding.get(a)
        .getShardHandOffs(StickyKey, { timeoutMs: 2_000 })
        .then((h) => {
          got = h;
        });
      await world.runUntil(() => got !== undefined, 3_000);
      return got ?? [];
    };
    let seen: readonly ShardHandOff[] = [];
    const deadline = world.now + 30_000;
    while (seen.length === 0 && world.now < deadline) {
      await world.advance(500);
      seen = await query();
    }
    expect(seen.length, `[sim ${world.describe()}] a hand-off in progress`).toBeGreaterThan(0);
    expect(seen.every((h) => h.reason === "rebalance" && /@b:2552/.test(h.fromRegion))).toBe(true);

    // b crashes; it is downed and removed: its region's hand-offs end unfinished
    await crashNode(world, network, oracle, "b");
    const removed = () => [a, c].every((n) => n.cluster.state.members.length === 2);
    expect(await world.runUntil(removed, 30_000)).toBe(true);
    // the coordinator gives b's shards new homes after the removal margin
    let left: readonly ShardHandOff[] = seen;
    const margin = world.now + 60_000;
    while (left.length > 0 && world.now < margin) {
      await world.advance(1_000);
      left = await query();
    }
    expect(left, `[sim ${world.describe()}] hand-offs after the removal`).toEqual([]);
    const text = scrape(a);
    const abandoned =
      'shardkit_sharding_hand_offs_abandoned_total{type="Sticky",reason="rebalance",cause="member-removed"}';
    expect(sampleOf(text, abandoned)).toBeGreaterThanOrEqual(seen.length);
    expect(told.length).toBe(sampleOf(text, abandoned));
    for (const h of seen) expect(told).toContain(`Sticky ${h.shardId} a rebalance member-removed`);
    expect(text).not.toMatch(
      /shardkit_sharding_hand_offs_abandoned_total\{[^}]*cause="(?!member-removed)/,
    );
    expect(
      sampleOf(text, 'shardkit_sharding_hand_off_timeouts_total{type="Sticky",reason="rebalance"}'),
    ).toBe(0);
    expect(
      sampleOf(
        text,
        'shardkit_sharding_hand_off_duration_seconds_count{type="Sticky",reason="rebalance"}',
      ),
    ).toBe(0);
  });
});
