/**
 * The metrics of a node on a simulated cluster: membership, remoting and sharding values
 * read at scrape time, shard and entity gauges from the lifecycle observer, ask latency,
 * the series about a member removed when it leaves; and the instruments of moves: phi
 * per monitored member, membership traffic, remote bytes, passivations, GetShardHome
 * round trips, hand-offs of a rebalance (reason rebalance) and of a graceful leave
 * (reason shutdown).
 */
import { describe, expect, it } from "vitest";
import {
  type ActorRef,
  Behaviors,
  Effect,
  EventSourcedBehavior,
  persistenceIdOf,
} from "../../src/actor/index.js";
import { ClusterNode, ClusterSharding, EntityTypeKey } from "../../src/api/index.js";
import { metricsOf, prometheusText } from "../../src/observability/index.js";
import { MemoryJournal } from "../../src/persistence/memory/memory-journal.js";
import { SimNetwork, SimWorld } from "../../src/runtime/sim/index.js";
import { FAST } from "../cluster/sim-cluster.js";

type Msg = { type: "ping"; replyTo: ActorRef<string> } | { type: "bye" };
const Key = EntityTypeKey<Msg>("Pinger");
const NUMBER_OF_SHARDS = 6;

/** The value of the series `series` (name and labels as written) in `text`, 0 when absent. */
function sampleOf(text: string, series: string): number {
  for (const line of text.split("\n"))
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  return 0;
}

/** `sampleOf` summed over the scrapes of `nodes`. */
function sumOver(nodes: readonly ClusterNode[], series: string): number {
  let n = 0;
  for (const node of nodes) n += sampleOf(scrape(node), series);
  return n;
}

function scrape(node: ClusterNode): string {
  return prometheusText(metricsOf(node).registry.collect());
}

/** Asks each of the entities e0..e19 once; true when all 20 answered. */
async function pingAll(world: SimWorld, sharding: ClusterSharding): Promise<boolean> {
  let replies = 0;
  for (let i = 0; i < 20; i++)
    void sharding
      .entityRefFor(Key, `e${i}`)
      .ask((replyTo: ActorRef<string>) => ({ type: "ping", replyTo }), { timeoutMs: 10_000 })
      .then(() => replies++);
  return world.runUntil(() => replies === 20, 30_000);
}

function startMember(world: SimWorld, network: SimNetwork, name: string, seeds: string[]) {
  return ClusterNode.start({
    systemName: "shop",
    host: name,
    port: 2552,
    seedNodes: seeds,
    settings: FAST,
    runtime: world.createRuntime(name),
    transport: network.transportFor(name),
  }).then((n) => {
    metricsOf(n);
    ClusterSharding.get(n).init({
      typeKey: Key,
      numberOfShards: NUMBER_OF_SHARDS,
      settings: { coordinator: { rebalanceIntervalMs: 1_000 } },
      createBehavior: (ctx) =>
        Behaviors.receiveMessage<Msg>((m) => {
          if (m.type === "bye") ctx.passivate();
          else m.replyTo.tell("pong");
        }),
    });
    return n;
  });
}

describe("node metrics (simulated cluster, seed 1)", () => {
  it("reports members, shards, entities and asks, and drops a removed member's series", {
    timeout: 60_000,
  }, async () => {
    const world = new SimWorld({ seed: 1 });
    const network = new SimNetwork(world);
    const seeds = ["a:2552", "b:2552", "c:2552"];
    const started: ClusterNode[] = [];
    for (const name of ["a", "b", "c"])
      void startMember(world, network, name, seeds).then((n) => started.push(n));
    const allUp = (count: number) => () =>
      started.length === count &&
      started.every(
        (n) =>
          n.cluster.state.members.length === count &&
          n.cluster.state.members.every((m) => m.status === "up"),
      );
    expect(await world.runUntil(allUp(3), 30_000)).toBe(true);
    const a = started.find((n) => n.address === "shop@a:2552") as ClusterNode;
    const sharding = ClusterSharding.get(a);
    expect(await pingAll(world, sharding)).toBe(true);
    // a monitors both others once their first heartbeat answers are in
    const monitoring = () =>
      [...a.cluster.failureDetectors.values()].filter((d) => d.isMonitoring).length === 2;
    expect(await world.runUntil(monitoring, 10_000)).toBe(true);

    const text = scrape(a);
    expect(text).toContain('shardkit_cluster_members{status="up"} 3');
    expect(text).toContain("shardkit_cluster_convergence 1");
    expect(text).toContain('shardkit_cluster_member_reachable{member="shop@c:2552"} 1');
    expect(text).toContain('shardkit_remote_association_up{member="shop@c:2552"} 1');
    expect(text).toContain("shardkit_ask_duration_seconds_count 20");
    expect(text).not.toMatch(/e1\b|"e\d+"/); // no entity id anywhere
    // shards and entities over the 3 members add up to what was used
    let shards = 0;
    let entities = 0;
    for (const n of started) {
      const t = scrape(n);
      shards += Number(/shardkit_sharding_shards\{type="Pinger"\} (\d+)/.exec(t)?.[1] ?? 0);
      entities += Number(/shardkit_sharding_entities\{type="Pinger"\} (\d+)/.exec(t)?.[1] ?? 0);
    }
    expect(entities).toBe(20);
    expect(shards).toBeGreaterThan(0);
    expect(shards).toBeLessThanOrEqual(NUMBER_OF_SHARDS);

    // phi of each monitored member (both others: 3 members), healthy
    for (const m of ["shop@b:2552", "shop@c:2552"]) {
      expect(text).toMatch(new RegExp(`shardkit_cluster_member_phi\\{member="${m}"\\} `));
      expect(sampleOf(text, `shardkit_cluster_member_phi{member="${m}"}`)).toBeLessThan(8);
    }
    expect(text).not.toContain('shardkit_cluster_member_phi{member="shop@a:2552"}');
    // membership traffic: gossip both ways, with bytes
    for (const direction of ["in", "out"]) {
      const labels = `{direction="${direction}",kind="gossip"}`;
      expect(sampleOf(text, `shardkit_cluster_membership_messages_total${labels}`)).toBeGreaterThan(
        0,
      );
      expect(sampleOf(text, `shardkit_cluster_membership_bytes_total${labels}`)).toBeGreaterThan(
        sampleOf(text, `shardkit_cluster_membership_messages_total${labels}`),
      );
    }
    expect(text).toContain(
      'shardkit_cluster_downing_decisions_total{strategy="keep-majority",decision="down-unreachable"} 0',
    );
    // remote bytes: every user message costs at least its 5 framing bytes
    const userOut = sampleOf(text, 'shardkit_remote_messages_total{direction="out",lane="user"}');
    expect(userOut).toBeGreaterThan(0);
    expect(
      sampleOf(text, 'shardkit_remote_bytes_total{direction="out",lane="user"}'),
    ).toBeGreaterThan(5 * userOut);
    expect(
      sampleOf(text, 'shardkit_remote_messages_total{direction="out",lane="control"}'),
    ).toBeGreaterThan(0);
    expect(text).toContain("shardkit_remote_reconnects_total 0");
    expect(text).toContain('shardkit_remote_associations{state="active"} 2');
    expect(text).toContain('shardkit_remote_associations{state="backoff"} 0');
    // a's region asked the coordinator for the home of every shard it routed to
    const homes = sampleOf(
      text,
      'shardkit_sharding_shard_home_duration_seconds_count{type="Pinger"}',
    );
    expect(homes).toBeGreaterThan(0);
    expect(homes).toBeLessThanOrEqual(NUMBER_OF_SHARDS);
    expect(text).toContain('shardkit_sharding_buffered_messages{type="Pinger"} 0');

    // passivation: the entity asks, its shard counts it (on whichever member hosts it)
    const passivated = 'shardkit_sharding_passivations_total{type="Pinger",reason="passivate"}';
    expect(sumOver(started, passivated)).toBe(0);
    sharding.entityRefFor(Key, "e3").tell({ type: "bye" });
    expect(await world.runUntil(() => sumOver(started, passivated) === 1, 10_000)).toBe(true);

    // rebalance (least-shard, every second): a, which got every shard first, gives up
    // shards down to the optimum (2 of 6 over 3); they are allocated again on demand
    const shardsOf = (n: ClusterNode) =>
      sampleOf(scrape(n), 'shardkit_sharding_shards{type="Pinger"}');
    expect(await world.runUntil(() => shardsOf(a) <= 2, 60_000)).toBe(true);
    const rebalanced =
      'shardkit_sharding_hand_off_duration_seconds_count{type="Pinger",reason="rebalance"}';
    const stops = 'shardkit_sharding_shard_stops_total{type="Pinger"}';
    expect(sumOver(started, rebalanced)).toBeGreaterThanOrEqual(4);
    expect(sumOver(started, rebalanced)).toBe(sumOver(started, stops));
    const timeouts = 'shardkit_sharding_hand_off_timeouts_total{type="Pinger",reason="rebalance"}';
    expect(sumOver(started, timeouts)).toBe(0);
    expect(await pingAll(world, sharding)).toBe(true);
    expect(started.every((n) => shardsOf(n) > 0)).toBe(true);

    // graceful leave of c: the coordinator hands each of c's shards off (reason shutdown)
    const c = started.find((n) => n.address === "shop@c:2552") as ClusterNode;
    const shardsOfC = shardsOf(c);
    void c.shutdown();
    const others = started.filter((n) => n !== c);
    const removed = () =>
      others.every((n) => n.cluster.state.members.length === 2 && n.cluster.state.convergence);
    expect(await world.runUntil(removed, 60_000)).toBe(true);
    const after = scrape(a);
    expect(after).not.toContain("shop@c:2552"); // phi, reachability, association: gone
    expect(after).toContain('shardkit_cluster_member_reachable{member="shop@b:2552"} 1');
    expect(after).toMatch(/shardkit_cluster_member_phi\{member="shop@b:2552"\} /);
    expect(after).toContain('shardkit_cluster_member_events_total{event="member-removed"} 1');
    const shutdownHandOffs =
      'shardkit_sharding_hand_off_duration_seconds_count{type="Pinger",reason="shutdown"}';
    expect(shardsOfC).toBeGreaterThan(0);
    expect(sumOver(others, shutdownHandOffs)).toBe(shardsOfC);
  });

  it("counts the messages a region buffers while no coordinator answers; times recoveries", {
    timeout: 30_000,
  }, async () => {
    const world = new SimWorld({ seed: 1 });
    const network = new SimNetwork(world);
    let a: ClusterNode | undefined;
    // the only seed node never answers: a never joins, its region never registers
    void startMember(world, network, "a", ["nobody:2552"]).then((n) => {
      a = n;
    });
    expect(await world.runUntil(() => a !== undefined, 10_000)).toBe(true);
    const node = a as ClusterNode;
    const buffered = 'shardkit_sharding_buffered_messages{type="Pinger"}';
    expect(sampleOf(scrape(node), buffered)).toBe(0);
    for (const id of ["x", "y", "z"])
      ClusterSharding.get(node).entityRefFor(Key, id).tell({ type: "bye" });
    await world.advance(2_000);
    expect(sampleOf(scrape(node), buffered)).toBe(3);
    expect(scrape(node)).not.toContain("shardkit_sharding_shard_home_duration_seconds_count");
    // an event-sourced actor's recovery (an empty journal: 0 ms of virtual time)
    const recovered =
      'shardkit_persistence_recovery_duration_seconds_count{type="",outcome="recovered"}';
    expect(sampleOf(scrape(node), recovered)).toBe(0);
    node.system.spawn(
      EventSourcedBehavior.create<string, string, number>({
        persistenceId: persistenceIdOf("Log", "1"),
        emptyState: 0,
        commandHandler: () => Effect.none(),
        eventHandler: (n) => n + 1,
        journal: new MemoryJournal(),
        eventCodec: {
          encode: () => ({ serializerId: 1, bytes: new Uint8Array(0) }),
          decode: () => "e",
        },
      }),
    );
    await world.advance(100);
    expect(sampleOf(scrape(node), recovered)).toBe(1);
  });
});
