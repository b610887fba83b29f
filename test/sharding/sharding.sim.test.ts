/**
 * Sharding end to end in the simulator: S1–S10, S15 and the classic API, each over
 * several seeds. Every shard and entity reports to the oracle oracle (ShardingOracle,
 * shardkit/testing); each test ends by asserting it saw no second live incarnation of an
 * entity and no second home of a shard.
 */
import { describe, expect, it } from "vitest";
import { type ActorRef, Behaviors } from "../../src/actor/index.js";
import { ClusterNode, ClusterSharding, EntityTypeKey } from "../../src/api/index.js";
import { SimNetwork, SimWorld } from "../../src/runtime/sim/index.js";
import type { ShardingOracle } from "../../src/testing/index.js";
import { FAST } from "../cluster/sim-cluster.js";
import { simSeeds } from "../support/sim-seeds.js";
import {
  allUp,
  CounterKey,
  crashNode,
  liveCounters,
  newOracle,
  settle,
  startCluster,
  startNode,
  totalOf,
  totalOfEventually,
} from "./sim-sharding.js";

describe.each(simSeeds([1, 2, 3]))("sharding (seed %i)", (seed) => {
  it("S1: a single node creates entities on first message and delivers every message", async () => {
    const world = new SimWorld({ seed });
    const network = new SimNetwork(world);
    const oracle = newOracle(world);
    const a = await startNode(world, network, "a", ["a:2552"], oracle);
    await world.runUntil(() => a.cluster.selfMember?.status === "up", 10_000);
    const sharding = ClusterSharding.get(a);
    for (let i = 0; i < 50; i++)
      for (let k = 1; k <= 3; k++)
        sharding.entityRefFor(CounterKey, `c-${i}`).tell({ type: "add", n: k });
    for (let i = 0; i < 50; i += 7) expect((await totalOf(world, a, `c-${i}`)).total).toBe(6);
    expect(oracle.entitiesStarted).toBe(50);
    oracle.assertNoViolations();
  });

  it("entity ids that are not plain actor names (empty, spaces, '/', '#', '%', '$', non-ASCII) are distinct and passivate", async () => {
    const world = new SimWorld({ seed });
    const network = new SimNetwork(world);
    const oracle = newOracle(world);
    const a = await startNode(world, network, "a", ["a:2552"], oracle);
    await world.runUntil(() => a.cluster.selfMember?.status === "up", 10_000);
    const sharding = ClusterSharding.get(a);
    const ids = [
      "",
      "a b",
      "x/y#z",
      "%41",
      "A",
      "%",
      "$x",
      "x$",
      "é",
      "e-A",
      "(*)",
      "t:1@h",
      "%%20",
    ];
    for (const id of ids) sharding.entityRefFor(CounterKey, id).tell({ type: "add", n: 1 });
    for (const id of ids) expect((await totalOf(world, a, id)).total).toBe(1);
    expect(oracle.entitiesStarted).toBe(ids.length);
    // passivation must map each terminated child back to its id: the next message starts
    // a new incarnation (a lost termination would leave the entity passivating forever)
    for (const id of ids) sharding.entityRefFor(CounterKey, id).tell({ type: "passivate" });
    await world.advance(1_000);
    expect(liveCounters(oracle).size).toBe(0);
    for (const id of ids) {
      // tell and ask of an EntityRef are own properties: they work detached too
      const { tell } = { ...sharding.entityRefFor(CounterKey, id) };
      tell({ type: "add", n: 2 });
    }
    for (const id of ids) expect((await totalOf(world, a, id)).total).toBe(2);
    expect(oracle.entitiesStarted).toBe(2 * ids.length);
    oracle.assertNoViolations();
  });

  it("messages for an entity that stopped on its own are received or counted as dead letters, none lost", async () => {
    const world = new SimWorld({ seed });
    const network = new SimNetwork(world);
    const a = await startNode(world, network, "a", ["a:2552"], newOracle(world));
    await world.runUntil(() => a.cluster.selfMember?.status === "up", 10_000);
    type StopMsg = { type: "stop" } | { type: "n" };
    const StopKey = EntityTypeKey<StopMsg>("Stopper");
    let received = 0;
    const sharding = ClusterSharding.get(a);
    sharding.init({
      typeKey: StopKey,
      numberOfShards: 5,
      createBehavior: () =>
        Behaviors.receiveMessage<StopMsg>((m) => {
          if (m.type === "stop") return Behaviors.stopped;
          received++;
          return undefined;
        }),
    });
    const ref = sharding.entityRefFor(StopKey, "s-1");
    ref.tell({ type: "n" });
    await world.advance(1_000);
    expect(received).toBe(1);
    const dead0 = a.system.stats.deadLetters;
    // The entity stops while hundreds of messages are on their way through the region
    // and the shard: some reach the shard after the entity is gone but before the shard
    // has seen it stop.
    ref.tell({ type: "stop" });
    for (let i = 0; i < 400; i++) ref.tell({ type: "n" });
    await world.advance(2_000);
    const dead = a.system.stats.deadLetters - dead0;
    expect(dead).toBeGreaterThan(0);
    expect(dead + received - 1, `[sim ${world.describe()}]`).toBe(400);
  });

  it("S2: a second node joins; messages from either node reach the same entity instance", async () => {
    const world = new SimWorld({ seed });
    const network = new SimNetwork(world);
    const oracle = newOracle(world);
    const [a, b] = (await startCluster(world, network, oracle, ["a", "b"])) as [
      ClusterNode,
      ClusterNode,
    ];
    const ids = Array.from({ length: 40 }, (_, i) => `c-${i}`);
    for (const id of ids) {
      ClusterSharding.get(a).entityRefFor(CounterKey, id).tell({ type: "add", n: 1 });
      ClusterSharding.get(b).entityRefFor(CounterKey, id).tell({ type: "add", n: 10 });
    }
    // Messages from b to shards hosted on a (and vice versa) travel and may first wait for
    // the shard's home: let every message arrive before reading the totals.
    await world.advance(5_000);
    const hosts = new Set<string>();
    for (const id of ids) {
      const fromA = await totalOf(world, a, id);
      const fromB = await totalOf(world, b, id);
      expect(fromA).toEqual(fromB);
      expect(fromA.total).toBe(11);
      hosts.add(fromA.node);
    }
    expect([...hosts].sort()).toEqual(["a", "b"]);
    expect(oracle.entitiesStarted).toBe(ids.length);
    oracle.assertNoViolations();
  });
});

describe.each(simSeeds([1, 2]))("sharding rebalance (seed %i)", (seed) => {
  it("S7: a node joins a loaded cluster; shards move to it; no message lost, order per sender kept", async () => {
    const world = new SimWorld({ seed });
    const network = new SimNetwork(world);
    const oracle = newOracle(world);
    const seeds = ["a:2552", "b:2552"];
    type Seq = { type: "seq"; n: number };
    const SeqKey = EntityTypeKey<Seq>("Seq");
    const delivered = new Map<number, number>();
    const perEntity = new Map<string, number>();
    let disorder = 0;
    const hostsSeen = new Set<string>();
    const start = async (name: string) => {
      const n = await startNode(world, network, name, seeds, oracle);
      ClusterSharding.get(n).init({
        typeKey: SeqKey,
        numberOfShards: 30,
        lifecycle: oracle,
        settings: { coordinator: { rebalanceIntervalMs: 2_000 } },
        createBehavior: ({ entityId }) =>
          Behaviors.receiveMessage<Seq>((m) => {
            delivered.set(m.n, (delivered.get(m.n) ?? 0) + 1);
            if ((perEntity.get(entityId) ?? -1) > m.n) disorder++;
            perEntity.set(entityId, m.n);
            hostsSeen.add(name);
          }),
      });
      return n;
    };
    const a = await start("a");
    const b = await start("b");
    await world.runUntil(
      () =>
        a.cluster.state.members.every((m) => m.status === "up") &&
        a.cluster.state.members.length === 2,
      30_000,
    );
    await world.advance(5_000);
    const sender = ClusterSharding.get(a);
    let sent = 0;
    const sendBurst = () => {
      for (let i = 0; i < 20; i++) {
        sender.entityRefFor(SeqKey, `e-${sent % 60}`).tell({ type: "seq", n: sent });
        sent++;
      }
    };
    for (let t = 0; t < 50; t++) {
      sendBurst();
      await world.advance(100);
    }
    const c = await start("c");
    for (let t = 0; t < 250; t++) {
      sendBurst();
      await world.advance(100);
    }
    await world.advance(10_000);
    expect(b.cluster.state.members.length).toBe(3);
    expect(c.cluster.selfMember?.status).toBe("up");
    expect(hostsSeen.has("c")).toBe(true);
    const missing = [...Array(sent).keys()].filter((n) => !delivered.has(n));
    const duplicated = [...delivered.entries()].filter(([, k]) => k > 1);
    expect(missing).toEqual([]);
    expect(duplicated).toEqual([]);
    expect(disorder).toBe(0);
    oracle.assertNoViolations();
  });
});

describe.each(simSeeds([1, 2]))("sharding failures and shutdown (seed %i)", (seed) => {
  async function cluster3(world: SimWorld, network: SimNetwork, oracle: ShardingOracle) {
    const nodes = await startCluster(world, network, oracle, ["a", "b", "c"]);
    return nodes as [ClusterNode, ClusterNode, ClusterNode];
  }

  it("S5: kill -9 of a node hosting shards: after downing its shards move and every entity answers", async () => {
    const world = new SimWorld({ seed });
    const network = new SimNetwork(world);
    const oracle = newOracle(world);
    const [a, b] = await cluster3(world, network, oracle);
    const ids = Array.from({ length: 30 }, (_, i) => `k-${i}`);
    for (const id of ids)
      ClusterSharding.get(a).entityRefFor(CounterKey, id).tell({ type: "add", n: 1 });
    await world.advance(2_000);
    const onC = [...liveCounters(oracle).entries()]
      .filter(([, node]) => node === "c")
      .map(([id]) => id);
    expect(onC.length).toBeGreaterThan(0);
    await crashNode(world, network, oracle, "c"); // a crashed process runs nothing
    const crashedAt = world.now;
    for (const id of ids) {
      // asks to entities of the dead node time out until its shards have moved: retry
      const r = await totalOfEventually(world, b, id);
      expect(["a", "b"]).toContain(r?.node);
    }
    expect(world.now - crashedAt).toBeLessThan(60_000);
    oracle.assertNoViolations();
  });

  it("S9: graceful shutdown of a node hands its shards off first; every entity stays reachable", async () => {
    const world = new SimWorld({ seed });
    const network = new SimNetwork(world);
    const oracle = newOracle(world);
    const [a, , c] = await cluster3(world, network, oracle);
    const ids = Array.from({ length: 30 }, (_, i) => `g-${i}`);
    for (const id of ids)
      ClusterSharding.get(a).entityRefFor(CounterKey, id).tell({ type: "add", n: 1 });
    await world.advance(2_000);
    expect([...liveCounters(oracle).values()]).toContain("c");
    let reason: string | undefined;
    c.shutdown("user").then((r) => {
      reason = r;
    });
    expect(await world.runUntil(() => reason !== undefined, 60_000)).toBe(true);
    expect([...liveCounters(oracle).values()]).not.toContain("c");
    for (const id of ids) expect(["a", "b"]).toContain((await totalOf(world, a, id)).node);
    oracle.assertNoViolations();
  });
});

describe.each(simSeeds([1, 2]))("sharding roles, passivation, min members (seed %i)", (seed) => {
  it("S3: a node without the role runs a proxy: it routes to entities and never hosts a shard", async () => {
    const world = new SimWorld({ seed });
    const network = new SimNetwork(world);
    const oracle = newOracle(world);
    const seeds = ["a:2552", "b:2552"];
    const worker = { roles: ["worker"], role: "worker" };
    await startNode(world, network, "a", seeds, oracle, worker);
    await startNode(world, network, "b", seeds, oracle, worker);
    const c = await startNode(world, network, "c", seeds, oracle, { role: "worker" });
    expect(
      await world.runUntil(
        () =>
          c.cluster.state.members.length === 3 &&
          c.cluster.state.members.every((m) => m.status === "up"),
        30_000,
      ),
    ).toBe(true);
    await world.advance(5_000);
    for (let i = 0; i < 30; i++)
      ClusterSharding.get(c).entityRefFor(CounterKey, `p-${i}`).tell({ type: "add", n: 2 });
    await world.advance(3_000);
    for (let i = 0; i < 30; i += 5) {
      const r = await totalOf(world, c, `p-${i}`);
      expect(r.total).toBe(2);
      expect(["a", "b"]).toContain(r.node);
    }
    expect([...liveCounters(oracle).values()]).not.toContain("c");
    expect([...oracle.liveShards(CounterKey.name).values()]).not.toContain("c");
    oracle.assertNoViolations();
  });

  it("S4: manual passivation stops the entity; a later message starts a new incarnation; idle passivation", async () => {
    const world = new SimWorld({ seed });
    const network = new SimNetwork(world);
    const oracle = newOracle(world);
    const a = await startNode(world, network, "a", ["a:2552"], oracle, {
      shardSettings: { passivateIdleAfterMs: 30_000 },
    });
    await world.runUntil(() => a.cluster.selfMember?.status === "up", 10_000);
    const ref = ClusterSharding.get(a).entityRefFor(CounterKey, "x");
    ref.tell({ type: "add", n: 5 });
    await world.advance(1_000);
    expect(liveCounters(oracle).has("x")).toBe(true);
    ref.tell({ type: "passivate" });
    await world.advance(1_000);
    expect(liveCounters(oracle).has("x")).toBe(false);
    ref.tell({ type: "add", n: 1 }); // starts a new incarnation (the state was not persistent)
    expect((await totalOf(world, a, "x")).total).toBe(1);
    expect(oracle.entitiesStarted).toBe(2);
    await world.advance(60_000); // idle for longer than passivateIdleAfterMs
    expect(liveCounters(oracle).has("x")).toBe(false);
    oracle.assertNoViolations();
  });

  it("S10: no shard is allocated until minNrOfMembers regions have registered", async () => {
    const world = new SimWorld({ seed });
    const network = new SimNetwork(world);
    const oracle = newOracle(world);
    const seeds = ["a:2552", "b:2552"];
    const min = { coordinatorSettings: { minNrOfMembers: 2 } };
    const a = await startNode(world, network, "a", seeds, oracle, min);
    await world.runUntil(() => a.cluster.selfMember?.status === "up", 20_000);
    ClusterSharding.get(a).entityRefFor(CounterKey, "m-1").tell({ type: "add", n: 1 });
    await world.advance(10_000);
    expect(oracle.entitiesStarted).toBe(0);
    await startNode(world, network, "b", seeds, oracle, min);
    expect(await world.runUntil(() => oracle.entitiesStarted === 1, 30_000)).toBe(true);
    expect((await totalOf(world, a, "m-1")).total).toBe(1);
    oracle.assertNoViolations();
  });
});

describe.each(simSeeds([1, 2]))("sharding queries (seed %i)", (seed) => {
  it("S15: region state, current regions, cluster stats (silent regions listed as failed), entity location", async () => {
    const world = new SimWorld({ seed });
    const network = new SimNetwork(world);
    const oracle = newOracle(world);
    const nodes = await startCluster(world, network, oracle, ["a", "b", "c"]);
    const a = nodes[0] as ClusterNode;
    const sharding = ClusterSharding.get(a);
    for (let i = 0; i < 30; i++)
      sharding.entityRefFor(CounterKey, `q-${i}`).tell({ type: "add", n: 1 });
    await world.advance(3_000);

    const run = <T>(p: Promise<T>): Promise<T> => settle(world, p);

    const regions = await run(sharding.getCurrentRegions(CounterKey));
    expect(regions).toHaveLength(3);
    const local = await run(sharding.getShardRegionState(CounterKey));
    const localEntities = local.shards.flatMap((s) => s.entityIds);
    expect(localEntities.length).toBe(
      [...liveCounters(oracle).values()].filter((n) => n === "a").length,
    );

    const stats = await run(sharding.getClusterShardingStats(CounterKey, { timeoutMs: 2_000 }));
    expect(stats.failed).toEqual([]);
    const total = stats.regions.reduce(
      (n, r) => n + Object.values(r.shards).reduce((x, y) => x + y, 0),
      0,
    );
    expect(total).toBe(30);

    const loc = await run(sharding.getEntityLocation(CounterKey, "q-3"));
    expect(loc.alive).toBe(true);
    expect(loc.region).toContain(`@${liveCounters(oracle).get("q-3")}:2552/`);
    const unknown = await run(sharding.getEntityLocation(CounterKey, "never-used-entity-id"));
    expect(unknown.alive).toBe(false);

    // a region that cannot answer is reported as failed, not silently missing
    network.partition(["a"], ["c"]);
    const partial = await run(sharding.getClusterShardingStats(CounterKey, { timeoutMs: 500 }));
    expect(partial.failed).toHaveLength(1);
    expect(partial.failed[0]).toContain("@c:2552/");
    oracle.assertNoViolations();
  });
});

describe.each(simSeeds([1, 2]))("sharding leaving nodes (seed %i)", (seed) => {
  it("S8: two nodes leave, one of them running the coordinator; every entity stays reachable", async () => {
    const world = new SimWorld({ seed });
    const network = new SimNetwork(world);
    const oracle = newOracle(world);
    const nodes = await startCluster(
      world,
      network,
      oracle,
      ["a", "b", "c", "d"],
      ["a:2552", "b:2552"],
    );
    const [a, b, , d] = nodes as [ClusterNode, ClusterNode, ClusterNode, ClusterNode];
    const ids = Array.from({ length: 40 }, (_, i) => `l-${i}`);
    for (const id of ids)
      ClusterSharding.get(d).entityRefFor(CounterKey, id).tell({ type: "add", n: 1 });
    await world.advance(3_000);
    let done = 0;
    for (const n of [a, b])
      n.shutdown("user").then(() => {
        done++;
      });
    expect(await world.runUntil(() => done === 2, 60_000)).toBe(true);
    expect(await world.runUntil(() => allUp(d, 2), 30_000)).toBe(true);
    for (const id of ids) {
      const r = await totalOfEventually(world, d, id);
      expect(["c", "d"]).toContain(r?.node);
    }
    oracle.assertNoViolations();
  });
});

describe.each(simSeeds([1, 2]))("sharding coordinator fail-over (seed %i)", (seed) => {
  it("S6: the coordinator's node crashes; known shards keep working; new shards are served once a new coordinator recovered", async () => {
    const world = new SimWorld({ seed });
    const network = new SimNetwork(world);
    const oracle = newOracle(world);
    const nodes = await startCluster(world, network, oracle, ["a", "b", "c"]);
    const [, b] = nodes as [ClusterNode, ClusterNode, ClusterNode];
    const ids = Array.from({ length: 40 }, (_, i) => `f-${i}`);
    for (const id of ids)
      ClusterSharding.get(b).entityRefFor(CounterKey, id).tell({ type: "add", n: 1 });
    await world.advance(2_000);
    // b and c know the homes of the shards they use; a runs the coordinator (oldest)
    const notOnA = ids.filter((id) => liveCounters(oracle).get(id) !== "a");
    expect(notOnA.length).toBeGreaterThan(10);
    await crashNode(world, network, oracle, "a");
    // right away, while a is still a member (not yet downed): known homes keep working
    for (const id of notOnA.slice(0, 10)) expect((await totalOf(world, b, id)).total).toBe(1);
    // a message for a brand-new entity (likely a new shard) waits for the new coordinator
    let fresh: { node: string; total: number } | undefined;
    ClusterSharding.get(b).entityRefFor(CounterKey, "brand-new").tell({ type: "add", n: 7 });
    for (let attempt = 0; fresh === undefined && attempt < 8; attempt++)
      fresh = await totalOf(world, b, "brand-new").catch(() => undefined);
    expect(fresh?.total).toBe(7);
    expect(["b", "c"]).toContain(fresh?.node);
    oracle.assertNoViolations();
  });
});

describe("sharding classic API (seed 1)", () => {
  it("start with a HashCodeMessageExtractor, startProxy on a node that never hosts, shardRegion", async () => {
    const { HashCodeMessageExtractor } = await import("../../src/api/index.js");
    type Deposit = { accountId: string; amount: number; replyTo?: ActorRef<number> };
    const world = new SimWorld({ seed: 1 });
    const network = new SimNetwork(world);
    const oracle = newOracle(world);
    const seeds = ["a:2552", "b:2552"];
    const started: ClusterNode[] = [];
    for (const name of ["a", "b"])
      ClusterNode.start({
        systemName: "bank",
        host: name,
        port: 2552,
        seedNodes: seeds,
        settings: FAST,
        runtime: world.createRuntime(name),
        transport: network.transportFor(name),
      }).then((n) => started.push(n));
    const up = () =>
      started.length === 2 &&
      started.every((n) => n.cluster.state.members.filter((m) => m.status === "up").length === 2);
    expect(await world.runUntil(up, 30_000)).toBe(true);
    const [a, b] = [...started].sort((x, y) => x.address.localeCompare(y.address)) as [
      ClusterNode,
      ClusterNode,
    ];
    const extractor = new HashCodeMessageExtractor<Deposit>(10, { entityId: (m) => m.accountId });
    const hostedOn = new Set<string>();
    const region = ClusterSharding.get(a).start({
      typeName: "Account",
      extractor,
      lifecycle: oracle,
      entity: (_id) =>
        Behaviors.setup<Deposit>(() => {
          hostedOn.add("a");
          let balance = 0;
          return Behaviors.receiveMessage<Deposit>((m) => {
            balance += m.amount;
            m.replyTo?.tell(balance);
          });
        }),
    });
    const proxy = ClusterSharding.get(b).startProxy({ typeName: "Account", extractor });
    expect(ClusterSharding.get(a).shardRegion("Account")).toBe(region);
    await world.advance(5_000);
    region.tell({ accountId: "acc-1", amount: 5 });
    let balance: number | undefined;
    const sink = b.system.spawn(
      Behaviors.receiveMessage<number>((n) => {
        balance = n;
      }),
    );
    proxy.tell({ accountId: "acc-1", amount: 10, replyTo: sink });
    expect(await world.runUntil(() => balance !== undefined, 20_000)).toBe(true);
    expect(balance).toBe(15);
    expect([...hostedOn]).toEqual(["a"]);
    expect([...oracle.liveEntities("Account")]).toEqual([["acc-1", "a"]]);
    oracle.assertNoViolations();
  });
});
