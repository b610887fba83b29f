/**
 * Cluster singleton scenarios in the simulator (scenarios G1–G4 in docs/scenarios.md) over several seeds,
 * with an oracle: never two instances alive at the same time.
 */
import { describe, expect, it } from "vitest";
import { type ActorRef, Behaviors } from "../../src/actor/index.js";
import { ClusterNode } from "../../src/api/index.js";
import { ClusterSingleton } from "../../src/cluster/singleton/index.js";
import { SimNetwork, type SimRuntime, SimWorld } from "../../src/runtime/sim/index.js";
import { simSeeds } from "../support/sim-seeds.js";
import { FAST } from "./sim-cluster.js";

type Msg = { type: "where"; replyTo: ActorRef<string> } | { type: "stop" };

class Oracle {
  readonly alive = new Set<string>();
  violations = 0;
  readonly started: { node: string; at: number }[] = [];
  start(node: string, at: number): void {
    if (this.alive.size > 0) this.violations++;
    this.alive.add(node);
    this.started.push({ node, at });
  }
  stop(node: string): void {
    this.alive.delete(node);
  }
}

class Harness {
  readonly world: SimWorld;
  readonly network: SimNetwork;
  readonly nodes = new Map<string, ClusterNode>();
  readonly runtimes = new Map<string, SimRuntime>();
  readonly oracle = new Oracle();
  readonly proxies = new Map<string, ActorRef<Msg>>();

  constructor(seed: number) {
    this.world = new SimWorld({ seed });
    this.network = new SimNetwork(this.world);
  }

  async start(names: string[], seeds: string[], stableAfterMs = 2_000): Promise<void> {
    for (const name of names) {
      const runtime = this.world.createRuntime(name);
      this.runtimes.set(name, runtime);
      ClusterNode.start({
        systemName: "app",
        host: name,
        port: 2552,
        seedNodes: seeds,
        // With the SBR out of play (manual downing), take over 1 s after removal.
        settings: stableAfterMs > 60_000 ? { ...FAST, downRemovalMarginMs: 1_000 } : FAST,
        failureDetector: { acceptableHeartbeatPauseMs: 1_000, firstHeartbeatEstimateMs: 200 },
        downing: { stableAfterMs },
        shutdown: { phases: { "cluster-exiting": { timeoutMs: 5_000 } } },
        runtime,
        transport: this.network.transportFor(name),
      }).then((node) => {
        this.nodes.set(name, node);
        const oracle = this.oracle;
        const world = this.world;
        const behavior = Behaviors.setup<Msg>((ctx) => {
          oracle.start(name, world.now);
          return Behaviors.receive<Msg>(
            (_c, m) => {
              if (m.type === "where") m.replyTo.tell(name);
              else return Behaviors.stopped;
            },
            (_c, sig) => {
              if (sig.type === "PostStop") oracle.stop(name);
              void ctx;
            },
          );
        });
        this.proxies.set(
          name,
          ClusterSingleton.init<Msg>(node, {
            name: "counter",
            behavior,
            stopMessage: { type: "stop" },
          }),
        );
      });
    }
    await this.until(() => names.every((n) => this.allUp(n, names.length)), 30_000);
  }

  allUp(name: string, count: number): boolean {
    const s = this.nodes.get(name)?.cluster.state;
    return (
      s !== undefined &&
      s.members.length === count &&
      s.members.every((m) => m.status === "up") &&
      s.convergence
    );
  }

  async until(p: () => boolean, ms: number): Promise<void> {
    if (!(await this.world.runUntil(p, ms)))
      throw new Error(`[sim ${this.world.describe()}] not reached in ${ms} ms`);
  }

  crash(name: string): void {
    this.runtimes.get(name)?.scheduler.cancelAll();
    this.network.crash(name);
    this.oracle.stop(name); // a crashed process runs nothing
  }

  /** Asks the singleton through `from`'s proxy where it runs. */
  async where(from: string): Promise<string> {
    const proxy = this.proxies.get(from);
    const node = this.nodes.get(from);
    if (proxy === undefined || node === undefined) throw new Error(`no node ${from}`);
    let answer: string | undefined;
    const sink = node.system.spawn(
      Behaviors.receiveMessage<string>((s) => {
        answer = s;
      }),
    );
    proxy.tell({ type: "where", replyTo: sink });
    await this.until(() => answer !== undefined, 20_000);
    return answer as string;
  }
}

describe.each(simSeeds([1, 2, 3]))("cluster singleton (seed %i)", (seed) => {
  it("G1: exactly one instance, on the oldest; proxies on every node reach it", async () => {
    const h = new Harness(seed);
    await h.start(["a", "b", "c"], ["a:2552", "b:2552", "c:2552"]);
    for (const n of ["a", "b", "c"]) expect(await h.where(n)).toBe("a");
    expect([...h.oracle.alive]).toEqual(["a"]);
    expect(h.oracle.violations).toBe(0);
  });

  it("G2: the oldest leaves gracefully: hand-over to the next oldest, never two at once, proxies deliver", async () => {
    const h = new Harness(seed);
    await h.start(["a", "b", "c"], ["a:2552", "b:2552", "c:2552"]);
    expect(await h.where("c")).toBe("a");
    void h.nodes.get("a")?.shutdown("user");
    await h.until(() => h.oracle.alive.has("b"), 30_000);
    expect(await h.where("c")).toBe("b");
    expect(h.oracle.violations).toBe(0);
    expect(h.oracle.started.map((s) => s.node)).toEqual(["a", "b"]);
  });

  it("G3: the oldest crashes: the new instance starts only after the old node is downed and removed", async () => {
    const h = new Harness(seed);
    await h.start(["a", "b", "c"], ["a:2552", "b:2552", "c:2552"]);
    expect(await h.where("b")).toBe("a");
    let removedAt = -1;
    h.nodes.get("b")?.cluster.subscribe((e) => {
      if (e.type === "member-removed" && e.member.uniqueAddress.address.host === "a")
        removedAt = h.world.now;
    });
    h.runtimes.get("a")?.scheduler.cancelAll();
    h.network.crash("a");
    h.oracle.stop("a"); // a crashed process runs nothing
    await h.until(() => h.oracle.alive.has("b"), 60_000);
    const startedOnB = h.oracle.started.find((s) => s.node === "b")?.at ?? -1;
    expect(removedAt).toBeGreaterThan(0);
    expect(startedOnB).toBeGreaterThanOrEqual(removedAt);
    expect(await h.where("c")).toBe("b");
    expect(h.oracle.violations).toBe(0);
  });

  it("G4: the singleton's node is downed (partitioned away): the instance stops there", async () => {
    const h = new Harness(seed);
    await h.start(["a", "b", "c"], ["a:2552", "b:2552", "c:2552"]);
    expect(await h.where("a")).toBe("a");
    h.network.partition(["a"], ["b", "c"]);
    await h.until(() => !h.oracle.alive.has("a"), 60_000);
    await h.until(() => h.oracle.alive.has("b"), 60_000);
    expect(h.oracle.violations).toBe(0);
  });
});

describe.each(simSeeds([1, 2]))(
  "cluster singleton take-over with manual downing (seed %i)",
  (seed) => {
    const names5 = ["a", "b", "c", "d", "e"];
    it.each([
      ["2-node cluster, the oldest crashes", ["a", "b"], ["a"], "b"],
      ["5-node cluster, the oldest crashes", names5, ["a"], "b"],
      ["5-node cluster, the 3 oldest crash", names5, ["a", "b", "c"], "d"],
    ])(
      "G3: %s: the next oldest takes over only after removal",
      async (_title, names, crashed, next) => {
        const h = new Harness(seed);
        // The SBR would wait 10 min: this test downs the crashed members by hand.
        await h.start(
          names,
          names.slice(0, 2).map((n) => `${n}:2552`),
          600_000,
        );
        const survivor = names.find((n) => !crashed.includes(n)) as string;
        expect(await h.where(survivor)).toBe("a");
        const removedAt = new Map<string, number>();
        h.nodes.get(survivor)?.cluster.subscribe((e) => {
          if (e.type === "member-removed")
            removedAt.set(e.member.uniqueAddress.address.host, h.world.now);
        });
        for (const n of crashed) h.crash(n);
        await h.world.advance(3_000);
        expect(h.oracle.alive.size).toBe(0);
        for (const n of crashed) h.nodes.get(survivor)?.cluster.down(`${n}:2552`);
        await h.until(() => h.oracle.alive.has(next), 60_000);
        const startedAt = h.oracle.started.find((s) => s.node === next)?.at ?? -1;
        for (const n of crashed)
          expect(startedAt).toBeGreaterThanOrEqual(removedAt.get(n) ?? Number.POSITIVE_INFINITY);
        expect(await h.where(survivor)).toBe(next);
        expect(h.oracle.violations).toBe(0);
      },
    );
  },
);

describe("cluster singleton with a lease", () => {
  it("does not start the instance until the lease is acquired", async () => {
    const { MemoryLeaseStore, MemoryLease } = await import(
      "../../src/persistence/memory/memory-lease.js"
    );
    const world = new SimWorld({ seed: 5 });
    const network = new SimNetwork(world);
    const runtime = world.createRuntime("a");
    const store = new MemoryLeaseStore(runtime.clock);
    // Someone else holds the lease for the first 10 s.
    new MemoryLease(store, "singleton-leased", "intruder", runtime.clock, runtime.scheduler, {
      ttlMs: 10_000,
      heartbeatIntervalMs: 9_000,
    })
      .acquire()
      .then(() => store.blackhole("intruder")); // its renewals fail: the lease expires at 10 s
    let startedAt = -1;
    ClusterNode.start({
      systemName: "app",
      host: "a",
      port: 2552,
      seedNodes: ["a:2552"],
      settings: FAST,
      runtime,
      transport: network.transportFor("a"),
    }).then((node) => {
      ClusterSingleton.init<string>(node, {
        name: "leased",
        behavior: Behaviors.setup<string>(() => {
          startedAt = world.now;
          return Behaviors.ignore;
        }),
        lease: new MemoryLease(store, "singleton-leased", "a", runtime.clock, runtime.scheduler, {
          ttlMs: 10_000,
          heartbeatIntervalMs: 2_000,
        }),
        settings: { leaseRetryIntervalMs: 1_000 },
      });
    });
    expect(await world.runUntil(() => startedAt >= 0, 30_000)).toBe(true);
    expect(startedAt).toBeGreaterThanOrEqual(10_000);
    expect(store.holderOf("singleton-leased")).toBe("a");
  });
});
