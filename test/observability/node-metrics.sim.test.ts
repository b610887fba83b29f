/**
 * The metrics of a node on a simulated 3-member cluster: membership, remoting and
 * sharding values read at scrape time, shard and entity gauges from the lifecycle
 * observer, ask latency, and the series about a member removed when it leaves.
 */
import { describe, expect, it } from "vitest";
import { type ActorRef, Behaviors } from "../../src/actor/index.js";
import { ClusterNode, ClusterSharding, EntityTypeKey } from "../../src/api/index.js";
import { metricsOf, prometheusText } from "../../src/observability/index.js";
import { SimNetwork, SimWorld } from "../../src/runtime/sim/index.js";
import { FAST } from "../cluster/sim-cluster.js";

type Msg = { type: "ping"; replyTo: ActorRef<string> };
const Key = EntityTypeKey<Msg>("Pinger");

describe("node metrics (simulated cluster, seed 1)", () => {
  it("reports members, shards, entities and asks, and drops a removed member's series", {
    timeout: 60_000,
  }, async () => {
    const world = new SimWorld({ seed: 1 });
    const network = new SimNetwork(world);
    const seeds = ["a:2552", "b:2552", "c:2552"];
    const started: ClusterNode[] = [];
    for (const name of ["a", "b", "c"])
      ClusterNode.start({
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
          numberOfShards: 6,
          createBehavior: () =>
            Behaviors.receiveMessage<Msg>((m) => {
              m.replyTo.tell("pong");
            }),
        });
        started.push(n);
      });
    const allUp = () =>
      started.length === 3 &&
      started.every(
        (n) =>
          n.cluster.state.members.length === 3 &&
          n.cluster.state.members.every((m) => m.status === "up"),
      );
    expect(await world.runUntil(allUp, 30_000)).toBe(true);
    const a = started.find((n) => n.address === "shop@a:2552") as ClusterNode;
    const sharding = ClusterSharding.get(a);
    const replies: string[] = [];
    for (let i = 0; i < 20; i++)
      void sharding
        .entityRefFor(Key, `e${i}`)
        .ask((replyTo: ActorRef<string>) => ({ type: "ping", replyTo }), { timeoutMs: 10_000 })
        .then((r) => replies.push(r));
    expect(await world.runUntil(() => replies.length === 20, 30_000)).toBe(true);

    const text = prometheusText(metricsOf(a).registry.collect());
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
      const t = prometheusText(metricsOf(n).registry.collect());
      shards += Number(/shardkit_sharding_shards\{type="Pinger"\} (\d+)/.exec(t)?.[1] ?? 0);
      entities += Number(/shardkit_sharding_entities\{type="Pinger"\} (\d+)/.exec(t)?.[1] ?? 0);
    }
    expect(entities).toBe(20);
    expect(shards).toBeGreaterThan(0);
    expect(shards).toBeLessThanOrEqual(6);

    const c = started.find((n) => n.address === "shop@c:2552") as ClusterNode;
    void c.shutdown();
    const others = started.filter((n) => n !== c);
    const removed = () =>
      others.every((n) => n.cluster.state.members.length === 2 && n.cluster.state.convergence);
    expect(await world.runUntil(removed, 60_000)).toBe(true);
    const after = prometheusText(metricsOf(a).registry.collect());
    expect(after).not.toContain("shop@c:2552");
    expect(after).toContain('shardkit_cluster_member_reachable{member="shop@b:2552"} 1');
    expect(after).toContain('shardkit_cluster_member_events_total{event="member-removed"} 1');
  });
});
