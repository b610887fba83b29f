/**
 * Sharding scenarios S13, S16–S19 in the simulator (docs/sharding.md; docs/scenarios.md,
 * section Sharding), each over several seeds, each checked by the registry oracle
 * (ShardingOracle): never two live incarnations of an entity, never two homes of a shard.
 * S20 (randomized faults) is in sharding-faults.sim.test.ts.
 */
import { describe, expect, it } from "vitest";
import {
  type ClusterNode,
  ClusterSharding,
  type CoordinatorAllocationStrategy,
  EntityTypeKey,
} from "../../src/api/index.js";
import { simSeeds } from "../support/sim-seeds.js";
import {
  allUp,
  type Counter,
  CounterKey,
  initCounter,
  type LifecycleEvent,
  recording,
  simSharding,
  startCluster,
  startNode,
  totalOf,
  totalOfEventually,
} from "./sim-sharding.js";

const TIMEOUT_MS = 30_000;

describe.each(simSeeds([1, 2, 3]))("sharding partitions (seed %i)", (seed) => {
  it(
    "S13: the coordinator's side is downed during a partition: new shards avoid it, its shards move, the others stay",
    async () => {
      const { world, network, oracle } = simSharding(seed);
      const events: LifecycleEvent[] = [];
      const lifecycle = recording(world, oracle, events);
      const nodes = await startCluster(
        world,
        network,
        oracle,
        ["a", "b", "c", "d", "e"],
        ["a:2552", "b:2552"],
        () => ({ lifecycle, numberOfShards: 100 }),
      );
      const [a, , c] = nodes as [ClusterNode, ClusterNode, ClusterNode, ClusterNode, ClusterNode];
      const old = Array.from({ length: 25 }, (_, i) => `o-${i}`);
      for (const id of old)
        ClusterSharding.get(c).entityRefFor(CounterKey, id).tell({ type: "add", n: 1 });
      await world.advance(3_000);
      const before = oracle.liveShards(CounterKey.name);
      expect(new Set(before.values())).toEqual(new Set(["a", "b", "c", "d", "e"]));

      // a (the oldest: it runs the coordinator) and b are cut off; keep-majority downs them
      network.partition(["a", "b"], ["c", "d", "e"]);
      const partitionedAt = world.now;
      // both sides keep sending to entities, old and new (the minority's coordinator may
      // still allocate to its side until it downs itself: the oracle checks the overlap)
      const fresh = Array.from({ length: 30 }, (_, i) => `n-${i}`);
      for (const id of fresh) {
        ClusterSharding.get(a).entityRefFor(CounterKey, id).tell({ type: "add", n: 100 });
        ClusterSharding.get(c).entityRefFor(CounterKey, id).tell({ type: "add", n: 1 });
      }
      expect(await world.runUntil(() => allUp(c, 3), 60_000)).toBe(true);
      const removedAt = world.now;
      for (const id of [...old, ...fresh]) {
        const r = await totalOfEventually(world, c, id);
        expect(["c", "d", "e"], `${id} answered from ${r?.node}`).toContain(r?.node);
      }
      // new shards were allocated during the partition (on the minority side too, by its
      // coordinator, until it downed itself), and after it only on the surviving side
      const known = new Set(before.keys());
      expect(
        events.some(
          (e) => e.what === "shard-started" && e.atMs >= partitionedAt && !known.has(e.id),
        ),
      ).toBe(true);
      const lateStarts = events.filter((e) => e.what === "shard-started" && e.atMs >= removedAt);
      expect(lateStarts.length).toBeGreaterThan(0);
      expect(lateStarts.filter((e) => !["c", "d", "e"].includes(e.node))).toEqual([]);
      // the survivors' shards stayed where they were: none of them stopped
      const survivorsBefore = [...before].filter(([, n]) => ["c", "d", "e"].includes(n));
      const after = oracle.liveShards(CounterKey.name);
      for (const [shard, n] of survivorsBefore) expect(after.get(shard), `shard ${shard}`).toBe(n);
      const stoppedOnSurvivors = events.filter(
        (e) =>
          e.what === "shard-stopped" && e.atMs >= partitionedAt && ["c", "d", "e"].includes(e.node),
      );
      expect(stoppedOnSurvivors).toEqual([]);
      // a and b stopped everything they ran
      expect(new Set(after.values())).toEqual(new Set(["c", "d", "e"]));
      oracle.assertNoViolations();
    },
    TIMEOUT_MS,
  );
});

/** Warnings printed by the simulated nodes, as `{ node, text }`. */
function warningsOf(lines: readonly string[]) {
  const out: { node: string; text: string }[] = [];
  for (const l of lines) {
    const m = /^\[sim seed=\d+ t=[\d.]+ ([^\]]+)\] WARN (.*)$/.exec(l);
    if (m !== null) out.push({ node: m[1] as string, text: m[2] as string });
  }
  return out;
}

describe.each(simSeeds([1, 2]))("sharding misconfiguration (seed %i)", (seed) => {
  const seeds = ["a:2552", "b:2552"];

  it(
    "S16: sharding not started on the oldest node: regions warn repeatedly, naming it; starting it there fixes everything",
    async () => {
      const lines: string[] = [];
      const { world, network, oracle } = simSharding(seed, {
        logLevel: "warn",
        write: (l) => lines.push(l),
      });
      const a = await startNode(world, network, "a", seeds, oracle, { sharding: false });
      await world.runUntil(() => a.cluster.selfMember?.status === "up", 20_000);
      const b = await startNode(world, network, "b", seeds, oracle);
      const c = await startNode(world, network, "c", seeds, oracle);
      expect(await world.runUntil(() => [a, b, c].every((n) => allUp(n, 3)), 30_000)).toBe(true);
      ClusterSharding.get(b).entityRefFor(CounterKey, "x").tell({ type: "add", n: 5 });
      await world.advance(35_000);
      const cause = 'sharding for "Counter" is not started on the oldest member';
      for (const node of ["b", "c"]) {
        const mine = warningsOf(lines).filter((w) => w.node === node && w.text.includes(cause));
        expect(mine.length, `warnings of ${node}`).toBeGreaterThanOrEqual(2);
      }
      expect(oracle.entitiesStarted).toBe(0);
      expect(lines.filter((l) => / ERROR /.test(l))).toEqual([]);
      // nothing crashed: starting sharding on a brings the coordinator up, and the message
      // buffered meanwhile reaches its entity (asked from the sender: order per sender holds)
      initCounter(a, "a", oracle);
      expect((await totalOfEventually(world, b, "x"))?.total).toBe(5);
      for (const n of [a, b, c]) expect(n.cluster.selfMember?.status).toBe("up");
      oracle.assertNoViolations();
    },
    TIMEOUT_MS,
  );

  it(
    "S16: sharding not started on a younger node: the coordinator warns repeatedly, naming the node; the others work",
    async () => {
      const lines: string[] = [];
      const { world, network, oracle } = simSharding(seed, {
        logLevel: "warn",
        write: (l) => lines.push(l),
      });
      const nodes = await startCluster(world, network, oracle, ["a", "b", "c"], seeds, (n) => ({
        sharding: n !== "c",
      }));
      const c = nodes[2] as ClusterNode;
      for (let i = 0; i < 20; i++)
        ClusterSharding.get(nodes[0] as ClusterNode)
          .entityRefFor(CounterKey, `w-${i}`)
          .tell({ type: "add", n: 1 });
      await world.advance(35_000);
      const about = warningsOf(lines).filter(
        (w) =>
          w.text.includes("registered no region or proxy") &&
          w.text.includes(c.address.replace(/^.*@/, "@")) &&
          w.text.includes("is sharding started on those nodes?"),
      );
      expect(about.length).toBeGreaterThanOrEqual(2);
      expect(new Set(about.map((w) => w.node))).toEqual(new Set(["a"])); // the coordinator's node
      for (let i = 0; i < 20; i += 4)
        expect(["a", "b"]).toContain(
          (await totalOf(world, nodes[1] as ClusterNode, `w-${i}`)).node,
        );
      expect([...oracle.liveShards(CounterKey.name).values()]).not.toContain("c");
      expect(lines.filter((l) => / ERROR /.test(l))).toEqual([]);
      oracle.assertNoViolations();
    },
    TIMEOUT_MS,
  );

  it(
    "S16: a role no node has: every node's proxy warns repeatedly, naming the role; a node with it fixes everything",
    async () => {
      const lines: string[] = [];
      const { world, network, oracle } = simSharding(seed, {
        logLevel: "warn",
        write: (l) => lines.push(l),
      });
      const nodes = await startCluster(world, network, oracle, ["a", "b"], seeds, () => ({
        role: "worker",
      }));
      const a = nodes[0] as ClusterNode;
      ClusterSharding.get(a).entityRefFor(CounterKey, "r").tell({ type: "add", n: 3 });
      await world.advance(35_000);
      for (const node of ["a", "b"]) {
        const mine = warningsOf(lines).filter(
          (w) =>
            w.node === node &&
            w.text.startsWith('proxy of "Counter" has no coordinator') &&
            w.text.includes('role "worker"'),
        );
        expect(mine.length, `warnings of ${node}`).toBeGreaterThanOrEqual(2);
      }
      expect(lines.filter((l) => / ERROR /.test(l))).toEqual([]);
      // a member with the role joins: the coordinator starts there, the buffered message
      // is delivered, and the entity lives on that member only
      await startNode(world, network, "w", seeds, oracle, { roles: ["worker"], role: "worker" });
      const r = await totalOfEventually(world, a, "r", 8);
      expect(r).toEqual({ node: "w", total: 3 });
      oracle.assertNoViolations();
    },
    TIMEOUT_MS,
  );
});

describe.each(simSeeds([1, 2]))("sharding roles and strategies (seed %i)", (seed) => {
  it(
    "S17: coordinators on their own role, two entity types on disjoint roles, reached through proxies",
    async () => {
      const registered: string[] = [];
      const { world, network, oracle } = simSharding(seed, {
        logLevel: "info",
        write: (l) => {
          if (l.includes('"event":"registered"')) registered.push(l);
        },
      });
      const Alpha = EntityTypeKey<Counter>("Alpha");
      const Beta = EntityTypeKey<Counter>("Beta");
      const roles: Record<string, string[]> = {
        w1: ["alpha"],
        ctl: ["coord"],
        w2: ["alpha"],
        w3: ["beta"],
        w4: ["beta"],
        fe: [],
      };
      const names = Object.keys(roles);
      const nodes = await startCluster(
        world,
        network,
        oracle,
        names,
        ["w1:2552", "ctl:2552"],
        (n) => ({
          roles: roles[n],
          sharding: false,
        }),
      );
      for (const [i, n] of nodes.entries()) {
        const name = names[i] as string;
        initCounter(n, name, oracle, { typeKey: Alpha, role: "alpha", coordinatorRole: "coord" });
        initCounter(n, name, oracle, { typeKey: Beta, role: "beta", coordinatorRole: "coord" });
      }
      await world.advance(5_000);
      const fe = nodes[names.indexOf("fe")] as ClusterNode;
      for (let i = 0; i < 30; i++) {
        ClusterSharding.get(fe).entityRefFor(Alpha, `x-${i}`).tell({ type: "add", n: 1 });
        ClusterSharding.get(fe).entityRefFor(Beta, `x-${i}`).tell({ type: "add", n: 2 });
      }
      for (let i = 0; i < 30; i += 3) {
        const alpha = await totalOfEventually(world, fe, `x-${i}`, 6, Alpha);
        const beta = await totalOfEventually(world, fe, `x-${i}`, 6, Beta);
        expect(alpha?.total).toBe(1);
        expect(["w1", "w2"]).toContain(alpha?.node);
        expect(beta?.total).toBe(2);
        expect(["w3", "w4"]).toContain(beta?.node);
      }
      expect(new Set(oracle.liveShards("Alpha").values())).toEqual(new Set(["w1", "w2"]));
      expect(new Set(oracle.liveShards("Beta").values())).toEqual(new Set(["w3", "w4"]));
      // every region and proxy of both types (6 nodes x 2) registered with a coordinator on ctl
      const where = registered.map(
        (l) => /registered with coordinator [^@]*@([^:]+):/.exec(l)?.[1],
      );
      expect(where.length).toBeGreaterThanOrEqual(12);
      expect(new Set(where)).toEqual(new Set(["ctl"]));
      oracle.assertNoViolations();
    },
    TIMEOUT_MS,
  );

  it(
    "S18: a custom allocation strategy chooses the regions and forces a rebalance",
    async () => {
      const { world, network, oracle } = simSharding(seed);
      const events: LifecycleEvent[] = [];
      const lifecycle = recording(world, oracle, events);
      let target = "b";
      const on = (regionId: string, host: string) => regionId.includes(`@${host}:`);
      const candidates: number[] = [];
      let rebalanceCalls = 0;
      const pinToTarget: CoordinatorAllocationStrategy = {
        allocateShard: (_requester, _shard, regions) => {
          candidates.push(regions.length);
          return regions.find((r) => on(r.regionId, target))?.regionId;
        },
        rebalance: (regions, inProgress) => {
          rebalanceCalls++;
          return regions
            .filter((r) => !on(r.regionId, target))
            .flatMap((r) => r.shards)
            .filter((s) => !inProgress.has(s));
        },
      };
      const nodes = await startCluster(world, network, oracle, ["a", "b", "c"], undefined, () => ({
        lifecycle,
        allocationStrategy: pinToTarget,
        coordinatorSettings: { rebalanceIntervalMs: 1_000 },
      }));
      const a = nodes[0] as ClusterNode;
      const ids = Array.from({ length: 40 }, (_, i) => `s-${i}`);
      for (const id of ids)
        ClusterSharding.get(a).entityRefFor(CounterKey, id).tell({ type: "add", n: 1 });
      await world.advance(5_000);
      expect(new Set(oracle.liveShards(CounterKey.name).values())).toEqual(new Set(["b"]));
      expect(candidates.length).toBeGreaterThan(5);
      expect(new Set(candidates)).toEqual(new Set([3])); // every region could take the shard
      const shardsOnB = oracle.liveShards(CounterKey.name).size;
      // the strategy changes its mind: its rebalance moves every shard, one tick at a time
      target = "c";
      const switchedAt = world.now;
      const callsBefore = rebalanceCalls;
      expect(
        await world.runUntil(() => oracle.liveShards(CounterKey.name).size === 0, 30_000),
      ).toBe(true);
      expect(rebalanceCalls).toBeGreaterThan(callsBefore);
      const moved = events.filter((e) => e.what === "shard-stopped" && e.atMs >= switchedAt);
      expect(new Set(moved.map((e) => e.node))).toEqual(new Set(["b"]));
      expect(moved.length).toBe(shardsOnB);
      // the next message to each shard starts it where the strategy now allocates: c
      for (const id of ids) expect((await totalOf(world, a, id)).node).toBe("c");
      expect(oracle.liveShards(CounterKey.name).size).toBe(shardsOnB);
      expect(new Set(oracle.liveShards(CounterKey.name).values())).toEqual(new Set(["c"]));
      oracle.assertNoViolations();
    },
    TIMEOUT_MS,
  );

  it(
    "S19: rolling update: new shards go to the newest appVersion, nothing is rebalanced while versions differ",
    async () => {
      const { world, network, oracle } = simSharding(seed);
      const events: LifecycleEvent[] = [];
      const lifecycle = recording(world, oracle, events);
      const seeds = ["a:2552", "b:2552"];
      const extras = (appVersion: string) => ({
        lifecycle,
        appVersion,
        numberOfShards: 60,
        coordinatorSettings: { rebalanceIntervalMs: 1_000 },
      });
      const [a, b] = (await startCluster(world, network, oracle, ["a", "b"], seeds, () =>
        extras("1.0.0"),
      )) as [ClusterNode, ClusterNode];
      const send = (from: ClusterNode, prefix: string, n: number) => {
        for (let i = 0; i < n; i++)
          ClusterSharding.get(from)
            .entityRefFor(CounterKey, `${prefix}-${i}`)
            .tell({ type: "add", n: 1 });
      };
      send(a, "v1", 30);
      await world.advance(3_000);
      const oldShards = new Map(oracle.liveShards(CounterKey.name));
      expect(new Set(oldShards.values())).toEqual(new Set(["a", "b"]));

      // c runs the new version: it gets every new shard, and no old shard moves to it
      const c = await startNode(world, network, "c", seeds, oracle, extras("1.1.0"));
      expect(await world.runUntil(() => allUp(a, 3) && allUp(c, 3), 30_000)).toBe(true);
      const cUpAt = world.now;
      await world.advance(3_000);
      send(b, "v2", 60);
      await world.advance(20_000); // twenty rebalance ticks
      const newShards = [...oracle.liveShards(CounterKey.name)].filter(([s]) => !oldShards.has(s));
      expect(newShards.length).toBeGreaterThan(0);
      expect(new Set(newShards.map(([, n]) => n))).toEqual(new Set(["c"]));
      expect(events.filter((e) => e.what === "shard-stopped" && e.atMs >= cUpAt)).toEqual([]);
      for (const [shard, n] of oldShards) expect(oracle.shardHome(CounterKey.name, shard)).toBe(n);

      // the old nodes leave one by one: their shards go to the new version
      for (const n of [a, b]) {
        let done = false;
        n.shutdown("user").then(() => {
          done = true;
        });
        expect(await world.runUntil(() => done, 60_000)).toBe(true);
      }
      expect(await world.runUntil(() => allUp(c, 1), 30_000)).toBe(true);
      for (let i = 0; i < 30; i += 5)
        expect((await totalOfEventually(world, c, `v1-${i}`))?.node).toBe("c");
      expect(new Set(oracle.liveShards(CounterKey.name).values())).toEqual(new Set(["c"]));

      // once every region runs one version, rebalancing resumes: c hands shards off, and
      // they start on d at their next message
      const d = await startNode(world, network, "d", ["c:2552"], oracle, extras("1.1.0"));
      expect(await world.runUntil(() => allUp(d, 2), 30_000)).toBe(true);
      const dUpAt = world.now;
      const handedOff = () =>
        events.some((e) => e.what === "shard-stopped" && e.node === "c" && e.atMs >= dUpAt);
      expect(await world.runUntil(handedOff, 30_000)).toBe(true);
      const hosts = new Set<string | undefined>();
      for (let i = 0; i < 30; i++) hosts.add((await totalOfEventually(world, c, `v1-${i}`))?.node);
      expect(hosts).toEqual(new Set(["c", "d"]));
      oracle.assertNoViolations();
    },
    TIMEOUT_MS,
  );
});
