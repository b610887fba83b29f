/**
 * Sharding end to end in the simulator (first slice): S1 single node, S2 a second node
 * joins — messages from either node reach the same entity instance; a registry oracle
 * checks there is never more than one live incarnation per entity.
 */
import { describe, expect, it } from "vitest";
import { type ActorRef, Behaviors } from "../../src/actor/index.js";
import { ClusterNode, ClusterSharding, EntityTypeKey } from "../../src/api/index.js";
import { SimNetwork, SimWorld } from "../../src/runtime/sim/index.js";
import { FAST } from "../cluster/sim-cluster.js";
import { simSeeds } from "../support/sim-seeds.js";

type Counter =
  | { type: "add"; n: number }
  | { type: "get"; replyTo: ActorRef<{ node: string; total: number }> }
  | { type: "passivate" };
const CounterKey = EntityTypeKey<Counter>("Counter");

class Registry {
  readonly live = new Map<string, string>();
  violations: string[] = [];
  started = 0;
  start(id: string, node: string): void {
    if (this.live.has(id))
      this.violations.push(`${id} started on ${node} while live on ${this.live.get(id)}`);
    this.live.set(id, node);
    this.started++;
  }
  stop(id: string): void {
    this.live.delete(id);
  }
}

interface NodeExtras {
  readonly roles?: string[];
  readonly role?: string;
  readonly shardSettings?: Record<string, unknown>;
  readonly coordinatorSettings?: Record<string, unknown>;
}

async function startNode(
  world: SimWorld,
  network: SimNetwork,
  name: string,
  seeds: string[],
  registry: Registry,
  extras: NodeExtras = {},
) {
  let node: ClusterNode | undefined;
  ClusterNode.start({
    systemName: "shop",
    host: name,
    port: 2552,
    seedNodes: seeds,
    settings: FAST,
    failureDetector: { acceptableHeartbeatPauseMs: 1_000, firstHeartbeatEstimateMs: 200 },
    downing: { stableAfterMs: 2_000 },
    roles: extras.roles,
    runtime: world.createRuntime(name),
    transport: network.transportFor(name),
  }).then((n) => {
    node = n;
  });
  await world.runUntil(() => node !== undefined, 5_000);
  const n = node as ClusterNode;
  ClusterSharding.get(n).init({
    typeKey: CounterKey,
    numberOfShards: 20,
    role: extras.role,
    settings: { shard: extras.shardSettings, coordinator: extras.coordinatorSettings },
    createBehavior: ({ entityId, passivate }) =>
      Behaviors.setup<Counter>(() => {
        registry.start(entityId, name);
        let total = 0;
        return Behaviors.receive<Counter>(
          (_c, m) => {
            if (m.type === "add") total += m.n;
            else if (m.type === "get") m.replyTo.tell({ node: name, total });
            else passivate();
          },
          (_c, sig) => {
            if (sig.type === "PostStop") registry.stop(entityId);
          },
        );
      }),
  });
  return n;
}

/** True when `node` sees exactly `size` members, all Up. */
function allUp(node: ClusterNode, size: number): boolean {
  const members = node.cluster.state.members;
  return members.length === size && members.every((m) => m.status === "up");
}

/**
 * Starts one node per name (all seeding from `seeds`), requires every node to see all of them
 * Up, then lets the regions register with the coordinator.
 */
async function startCluster(
  world: SimWorld,
  network: SimNetwork,
  registry: Registry,
  names: readonly string[],
  seeds: string[] = names.map((n) => `${n}:2552`),
): Promise<ClusterNode[]> {
  const nodes: ClusterNode[] = [];
  for (const n of names) nodes.push(await startNode(world, network, n, seeds, registry));
  expect(await world.runUntil(() => nodes.every((n) => allUp(n, names.length)), 30_000)).toBe(true);
  await world.advance(5_000);
  return nodes;
}

async function totalOf(world: SimWorld, node: ClusterNode, id: string) {
  let answer: { node: string; total: number } | undefined;
  let failure: unknown;
  ClusterSharding.get(node)
    .entityRefFor(CounterKey, id)
    .ask((replyTo: ActorRef<{ node: string; total: number }>) => ({ type: "get", replyTo }), {
      timeoutMs: 10_000,
    })
    .then(
      (a) => {
        answer = a;
      },
      (e: unknown) => {
        failure = e;
      },
    );
  const ok = await world.runUntil(() => answer !== undefined || failure !== undefined, 15_000);
  if (!ok || answer === undefined)
    throw new Error(
      `[sim ${world.describe()}] no answer from ${id}: ${String(failure ?? "no reply")}`,
    );
  return answer;
}

describe.each(simSeeds([1, 2, 3]))("sharding (seed %i)", (seed) => {
  it("S1: a single node creates entities on first message and delivers every message", async () => {
    const world = new SimWorld({ seed });
    const network = new SimNetwork(world);
    const registry = new Registry();
    const a = await startNode(world, network, "a", ["a:2552"], registry);
    await world.runUntil(() => a.cluster.selfMember?.status === "up", 10_000);
    const sharding = ClusterSharding.get(a);
    for (let i = 0; i < 50; i++)
      for (let k = 1; k <= 3; k++)
        sharding.entityRefFor(CounterKey, `c-${i}`).tell({ type: "add", n: k });
    for (let i = 0; i < 50; i += 7) expect((await totalOf(world, a, `c-${i}`)).total).toBe(6);
    expect(registry.started).toBe(50);
    expect(registry.violations).toEqual([]);
  });

  it("entity ids that are not plain actor names (empty, spaces, '/', '#', '%', '$', non-ASCII) are distinct and passivate", async () => {
    const world = new SimWorld({ seed });
    const network = new SimNetwork(world);
    const registry = new Registry();
    const a = await startNode(world, network, "a", ["a:2552"], registry);
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
    expect(registry.started).toBe(ids.length);
    // passivation must map each terminated child back to its id: the next message starts
    // a new incarnation (a lost termination would leave the entity passivating forever)
    for (const id of ids) sharding.entityRefFor(CounterKey, id).tell({ type: "passivate" });
    await world.advance(1_000);
    expect(registry.live.size).toBe(0);
    for (const id of ids) {
      // tell and ask of an EntityRef are own properties: they work detached too
      const { tell } = { ...sharding.entityRefFor(CounterKey, id) };
      tell({ type: "add", n: 2 });
    }
    for (const id of ids) expect((await totalOf(world, a, id)).total).toBe(2);
    expect(registry.started).toBe(2 * ids.length);
    expect(registry.violations).toEqual([]);
  });

  it("messages for an entity that stopped on its own are received or counted as dead letters, none lost", async () => {
    const world = new SimWorld({ seed });
    const network = new SimNetwork(world);
    const a = await startNode(world, network, "a", ["a:2552"], new Registry());
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
    const registry = new Registry();
    const [a, b] = (await startCluster(world, network, registry, ["a", "b"])) as [
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
    expect(registry.started).toBe(ids.length);
    expect(registry.violations).toEqual([]);
  });
});

describe.each(simSeeds([1, 2]))("sharding rebalance (seed %i)", (seed) => {
  it("S7: a node joins a loaded cluster; shards move to it; no message lost, order per sender kept", async () => {
    const world = new SimWorld({ seed });
    const network = new SimNetwork(world);
    const registry = new Registry();
    const seeds = ["a:2552", "b:2552"];
    type Seq = { type: "seq"; n: number };
    const SeqKey = EntityTypeKey<Seq>("Seq");
    const delivered = new Map<number, number>();
    const perEntity = new Map<string, number>();
    let disorder = 0;
    const hostsSeen = new Set<string>();
    const start = async (name: string) => {
      const n = await startNode(world, network, name, seeds, registry);
      ClusterSharding.get(n).init({
        typeKey: SeqKey,
        numberOfShards: 30,
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
    expect(registry.violations).toEqual([]);
  });
});

describe.each(simSeeds([1, 2]))("sharding failures and shutdown (seed %i)", (seed) => {
  async function cluster3(world: SimWorld, network: SimNetwork, registry: Registry) {
    const nodes = await startCluster(world, network, registry, ["a", "b", "c"]);
    return nodes as [ClusterNode, ClusterNode, ClusterNode];
  }

  it("S5: kill -9 of a node hosting shards: after downing its shards move and every entity answers", async () => {
    const world = new SimWorld({ seed });
    const network = new SimNetwork(world);
    const registry = new Registry();
    const [a, b] = await cluster3(world, network, registry);
    const ids = Array.from({ length: 30 }, (_, i) => `k-${i}`);
    for (const id of ids)
      ClusterSharding.get(a).entityRefFor(CounterKey, id).tell({ type: "add", n: 1 });
    await world.advance(2_000);
    const onC = [...registry.live.entries()].filter(([, node]) => node === "c").map(([id]) => id);
    expect(onC.length).toBeGreaterThan(0);
    world.getRuntime("c")?.scheduler.cancelAll();
    network.crash("c");
    for (const id of onC) registry.stop(id); // a crashed process runs nothing
    const crashedAt = world.now;
    for (const id of ids) {
      // asks to entities of the dead node time out until its shards have moved: retry
      let r: { node: string; total: number } | undefined;
      for (let attempt = 0; r === undefined && attempt < 6; attempt++)
        r = await totalOf(world, b, id).catch(() => undefined);
      expect(["a", "b"]).toContain(r?.node);
    }
    expect(world.now - crashedAt).toBeLessThan(60_000);
    expect(registry.violations).toEqual([]);
  });

  it("S9: graceful shutdown of a node hands its shards off first; every entity stays reachable", async () => {
    const world = new SimWorld({ seed });
    const network = new SimNetwork(world);
    const registry = new Registry();
    const [a, , c] = await cluster3(world, network, registry);
    const ids = Array.from({ length: 30 }, (_, i) => `g-${i}`);
    for (const id of ids)
      ClusterSharding.get(a).entityRefFor(CounterKey, id).tell({ type: "add", n: 1 });
    await world.advance(2_000);
    expect([...registry.live.values()]).toContain("c");
    let reason: string | undefined;
    c.shutdown("user").then((r) => {
      reason = r;
    });
    expect(await world.runUntil(() => reason !== undefined, 60_000)).toBe(true);
    expect([...registry.live.values()]).not.toContain("c");
    for (const id of ids) expect(["a", "b"]).toContain((await totalOf(world, a, id)).node);
    expect(registry.violations).toEqual([]);
  });
});

describe.each(simSeeds([1, 2]))("sharding roles, passivation, min members (seed %i)", (seed) => {
  it("S3: a node without the role runs a proxy: it routes to entities and never hosts a shard", async () => {
    const world = new SimWorld({ seed });
    const network = new SimNetwork(world);
    const registry = new Registry();
    const seeds = ["a:2552", "b:2552"];
    const worker = { roles: ["worker"], role: "worker" };
    await startNode(world, network, "a", seeds, registry, worker);
    await startNode(world, network, "b", seeds, registry, worker);
    const c = await startNode(world, network, "c", seeds, registry, { role: "worker" });
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
    expect([...registry.live.values()]).not.toContain("c");
  });

  it("S4: manual passivation stops the entity; a later message starts a new incarnation; idle passivation", async () => {
    const world = new SimWorld({ seed });
    const network = new SimNetwork(world);
    const registry = new Registry();
    const a = await startNode(world, network, "a", ["a:2552"], registry, {
      shardSettings: { passivateIdleAfterMs: 30_000 },
    });
    await world.runUntil(() => a.cluster.selfMember?.status === "up", 10_000);
    const ref = ClusterSharding.get(a).entityRefFor(CounterKey, "x");
    ref.tell({ type: "add", n: 5 });
    await world.advance(1_000);
    expect(registry.live.has("x")).toBe(true);
    ref.tell({ type: "passivate" });
    await world.advance(1_000);
    expect(registry.live.has("x")).toBe(false);
    ref.tell({ type: "add", n: 1 }); // starts a new incarnation (the state was not persistent)
    expect((await totalOf(world, a, "x")).total).toBe(1);
    expect(registry.started).toBe(2);
    await world.advance(60_000); // idle for longer than passivateIdleAfterMs
    expect(registry.live.has("x")).toBe(false);
    expect(registry.violations).toEqual([]);
  });

  it("S10: no shard is allocated until minNrOfMembers regions have registered", async () => {
    const world = new SimWorld({ seed });
    const network = new SimNetwork(world);
    const registry = new Registry();
    const seeds = ["a:2552", "b:2552"];
    const min = { coordinatorSettings: { minNrOfMembers: 2 } };
    const a = await startNode(world, network, "a", seeds, registry, min);
    await world.runUntil(() => a.cluster.selfMember?.status === "up", 20_000);
    ClusterSharding.get(a).entityRefFor(CounterKey, "m-1").tell({ type: "add", n: 1 });
    await world.advance(10_000);
    expect(registry.started).toBe(0);
    await startNode(world, network, "b", seeds, registry, min);
    expect(await world.runUntil(() => registry.started === 1, 30_000)).toBe(true);
    expect((await totalOf(world, a, "m-1")).total).toBe(1);
  });
});

describe.each(simSeeds([1, 2]))("sharding queries (seed %i)", (seed) => {
  it("S15: region state, current regions, cluster stats (silent regions listed as failed), entity location", async () => {
    const world = new SimWorld({ seed });
    const network = new SimNetwork(world);
    const registry = new Registry();
    const nodes = await startCluster(world, network, registry, ["a", "b", "c"]);
    const a = nodes[0] as ClusterNode;
    const sharding = ClusterSharding.get(a);
    for (let i = 0; i < 30; i++)
      sharding.entityRefFor(CounterKey, `q-${i}`).tell({ type: "add", n: 1 });
    await world.advance(3_000);

    const run = async <T>(p: Promise<T>): Promise<T> => {
      let out: { v: T } | undefined;
      let err: unknown;
      p.then(
        (v) => {
          out = { v };
        },
        (e) => {
          err = e;
        },
      );
      await world.runUntil(() => out !== undefined || err !== undefined, 30_000);
      if (out === undefined)
        throw err ?? new Error(`[sim ${world.describe()}] query did not settle`);
      return out.v;
    };

    const regions = await run(sharding.getCurrentRegions(CounterKey));
    expect(regions).toHaveLength(3);
    const local = await run(sharding.getShardRegionState(CounterKey));
    const localEntities = local.shards.flatMap((s) => s.entityIds);
    expect(localEntities.length).toBe([...registry.live.values()].filter((n) => n === "a").length);

    const stats = await run(sharding.getClusterShardingStats(CounterKey, { timeoutMs: 2_000 }));
    expect(stats.failed).toEqual([]);
    const total = stats.regions.reduce(
      (n, r) => n + Object.values(r.shards).reduce((x, y) => x + y, 0),
      0,
    );
    expect(total).toBe(30);

    const loc = await run(sharding.getEntityLocation(CounterKey, "q-3"));
    expect(loc.alive).toBe(true);
    expect(loc.region).toContain(`@${registry.live.get("q-3")}:2552/`);
    const unknown = await run(sharding.getEntityLocation(CounterKey, "never-used-entity-id"));
    expect(unknown.alive).toBe(false);

    // a region that cannot answer is reported as failed, not silently missing
    network.partition(["a"], ["c"]);
    const partial = await run(sharding.getClusterShardingStats(CounterKey, { timeoutMs: 500 }));
    expect(partial.failed).toHaveLength(1);
    expect(partial.failed[0]).toContain("@c:2552/");
  });
});

describe.each(simSeeds([1, 2]))("sharding leaving nodes (seed %i)", (seed) => {
  it("S8: two nodes leave, one of them running the coordinator; every entity stays reachable", async () => {
    const world = new SimWorld({ seed });
    const network = new SimNetwork(world);
    const registry = new Registry();
    const nodes = await startCluster(
      world,
      network,
      registry,
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
      let r: { node: string; total: number } | undefined;
      for (let attempt = 0; r === undefined && attempt < 6; attempt++)
        r = await totalOf(world, d, id).catch(() => undefined);
      expect(["c", "d"]).toContain(r?.node);
    }
    expect(registry.violations).toEqual([]);
  });
});

describe.each(simSeeds([1, 2]))("sharding coordinator fail-over (seed %i)", (seed) => {
  it("S6: the coordinator's node crashes; known shards keep working; new shards are served once a new coordinator recovered", async () => {
    const world = new SimWorld({ seed });
    const network = new SimNetwork(world);
    const registry = new Registry();
    const nodes = await startCluster(world, network, registry, ["a", "b", "c"]);
    const [, b] = nodes as [ClusterNode, ClusterNode, ClusterNode];
    const ids = Array.from({ length: 40 }, (_, i) => `f-${i}`);
    for (const id of ids)
      ClusterSharding.get(b).entityRefFor(CounterKey, id).tell({ type: "add", n: 1 });
    await world.advance(2_000);
    // b and c know the homes of the shards they use; a runs the coordinator (oldest)
    const notOnA = ids.filter((id) => registry.live.get(id) !== "a");
    expect(notOnA.length).toBeGreaterThan(10);
    world.getRuntime("a")?.scheduler.cancelAll();
    network.crash("a");
    for (const [id, n] of [...registry.live]) if (n === "a") registry.stop(id);
    // right away, while a is still a member (not yet downed): known homes keep working
    for (const id of notOnA.slice(0, 10)) expect((await totalOf(world, b, id)).total).toBe(1);
    // a message for a brand-new entity (likely a new shard) waits for the new coordinator
    let fresh: { node: string; total: number } | undefined;
    ClusterSharding.get(b).entityRefFor(CounterKey, "brand-new").tell({ type: "add", n: 7 });
    for (let attempt = 0; fresh === undefined && attempt < 8; attempt++)
      fresh = await totalOf(world, b, "brand-new").catch(() => undefined);
    expect(fresh?.total).toBe(7);
    expect(["b", "c"]).toContain(fresh?.node);
    expect(registry.violations).toEqual([]);
  });
});

describe("sharding classic API (seed 1)", () => {
  it("start with a HashCodeMessageExtractor, startProxy on a node that never hosts, shardRegion", async () => {
    const { HashCodeMessageExtractor } = await import("../../src/api/index.js");
    type Deposit = { accountId: string; amount: number; replyTo?: ActorRef<number> };
    const world = new SimWorld({ seed: 1 });
    const network = new SimNetwork(world);
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
  });
});
