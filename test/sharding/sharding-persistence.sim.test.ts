/**
 * Sharding on durable stores, in the simulator: S11 remember entities (rebalance/crash,
 * coordinator fail-over, full cluster restart, passivated ones stay stopped, restart after
 * entityRestartBackoffMs), S12 a changed shard extractor after a full restart, S14 a
 * coordinator whose store fails (known shards keep routing; new allocations wait), and
 * the persistent coordinator state surviving a full restart. The "database" is one
 * MemoryJournal + MemorySnapshotStore shared by every node, as a real database would be.
 * The S11 scenarios also run in stateStoreMode "ddata" (no database: replicated between the
 * members, durable keys on each member's own "disk", a MemoryDDataDurableStore that
 * survives the node's crash; a restarted cluster gets the old members' disks).
 */
import { describe, expect, it } from "vitest";
import { type ActorRef, Behaviors } from "../../src/actor/index.js";
import { ClusterNode, ClusterSharding, EntityTypeKey } from "../../src/api/index.js";
import { JournalRememberEntitiesStore } from "../../src/cluster/sharding/journal-remember-entities-store.js";
import {
  coordinatorPersistenceId,
  decodeShardingData,
} from "../../src/cluster/sharding/sharding-store-codec.js";
import { shardIdFunctions } from "../../src/core/sharding/shard-id.js";
import { MemoryJournal } from "../../src/persistence/memory/memory-journal.js";
import { MemorySnapshotStore } from "../../src/persistence/memory/memory-snapshot-store.js";
import { MemoryDDataDurableStore } from "../../src/ports/ddata-durable-store.js";
import {
  type Journal,
  JournalConflictError,
  type JournalEvent,
  PersistenceStoreError,
} from "../../src/ports/journal.js";
import { isCoordinatorEvent } from "../../src/protocol/sharding.js";
import { SimNetwork, SimWorld } from "../../src/runtime/sim/index.js";
import { ShardingOracle } from "../../src/testing/index.js";
import { FAST } from "../cluster/sim-cluster.js";
import { JournalWrapper } from "../support/journal-wrapper.js";
import { simSeeds } from "../support/sim-seeds.js";

type Cmd =
  | { type: "add"; n: number }
  | { type: "get"; replyTo: ActorRef<{ node: string; total: number }> }
  | { type: "passivate" }
  | { type: "fail" };
const Key = EntityTypeKey<Cmd>("Remembered");

/** Live incarnations per entity id; a second live one is a violation. */
class Registry {
  readonly live = new Map<string, string>();
  readonly violations: string[] = [];
  start(id: string, node: string): void {
    const at = this.live.get(id);
    if (at !== undefined) this.violations.push(`${id} started on ${node} while live on ${at}`);
    this.live.set(id, node);
  }
  stop(id: string, node: string): void {
    if (this.live.get(id) === node) this.live.delete(id);
  }
  crashed(node: string): void {
    for (const [id, n] of [...this.live]) if (n === node) this.live.delete(id);
  }
}

/** A journal that can be switched to fail every append (a store that is down). */
class SwitchableJournal extends JournalWrapper {
  down = false;
  override append(pid: string, seq: number, events: readonly JournalEvent[]): Promise<void> {
    if (this.down) return Promise.reject(new PersistenceStoreError("append", pid, "store down"));
    return this.inner.append(pid, seq, events);
  }
}

/**
 * A journal whose appends to one persistence id take `delayMs` of virtual time (a slow
 * database), counting the appends the inner journal rejects with a JournalConflictError
 * (two writers at once).
 */
class SlowJournal extends JournalWrapper {
  conflicts = 0;
  /** Rejects the next append to the slow persistence id with a JournalConflictError. */
  conflictNext = false;
  constructor(
    inner: Journal,
    private readonly world: SimWorld,
    private readonly slowPid: string,
    private readonly delayMs: number,
  ) {
    super(inner);
  }
  override append(pid: string, seq: number, events: readonly JournalEvent[]): Promise<void> {
    const write = () =>
      this.inner.append(pid, seq, events).catch((error: unknown) => {
        if (error instanceof JournalConflictError) this.conflicts++;
        throw error;
      });
    if (pid !== this.slowPid) return write();
    if (this.conflictNext) {
      this.conflictNext = false;
      this.conflicts++;
      return Promise.reject(new JournalConflictError(pid, seq));
    }
    return new Promise<void>((resolve, reject) => {
      this.world.schedule(this.delayMs, () => write().then(resolve, reject));
    });
  }
}

interface Env {
  readonly world: SimWorld;
  /** The registry oracle of shardkit/testing: shards and entities, never two live. */
  readonly oracle: ShardingOracle;
  readonly network: SimNetwork;
  readonly registry: Registry;
  readonly journal: Journal;
  readonly snapshots: MemorySnapshotStore;
  /** Where sharding keeps its state: the journal, or distributed data. */
  readonly mode: Mode;
  /** stateStoreMode "ddata": each member's disk, by disk name. */
  readonly disks: Map<string, MemoryDDataDurableStore>;
}

type Mode = "persistence" | "ddata";

interface NodeOptions {
  readonly numberOfShards?: number;
  readonly remember?: boolean;
  /** stateStoreMode "ddata": the disk this node gets (default: its own name's). */
  readonly disk?: string;
}

function env(
  seed: number,
  journal: Journal = new MemoryJournal(),
  mode: Mode = "persistence",
): Env {
  const world = new SimWorld({
    seed,
    logLevel: process.env.SIMLOG === "1" ? "info" : process.env.SIMLOG === "2" ? "debug" : "off",
  });
  return {
    world,
    oracle: new ShardingOracle({ now: () => world.now, describe: () => world.describe() }),
    network: new SimNetwork(world),
    registry: new Registry(),
    journal,
    snapshots: new MemorySnapshotStore(),
    mode,
    disks: new Map(),
  };
}

function diskOf(e: Env, name: string): MemoryDDataDurableStore {
  let d = e.disks.get(name);
  if (d === undefined) {
    d = new MemoryDDataDurableStore(`disk-${name}`);
    e.disks.set(name, d);
  }
  return d;
}

async function startNode(e: Env, name: string, seeds: string[], o: NodeOptions = {}) {
  let node: ClusterNode | undefined;
  ClusterNode.start({
    systemName: "bank",
    host: name,
    port: 2552,
    seedNodes: seeds,
    settings: FAST,
    failureDetector: { acceptableHeartbeatPauseMs: 1_000, firstHeartbeatEstimateMs: 200 },
    downing: { stableAfterMs: 2_000 },
    runtime: e.world.createRuntime(name),
    transport: e.network.transportFor(name),
  }).then((n) => {
    node = n;
  });
  await e.world.runUntil(() => node !== undefined, 5_000);
  const n = node as ClusterNode;
  ClusterSharding.get(n).init({
    typeKey: Key,
    numberOfShards: o.numberOfShards ?? 12,
    ...(e.mode === "persistence"
      ? { persistence: { journal: e.journal, snapshots: e.snapshots } }
      : {
          stateStoreMode: "ddata" as const,
          ddata: { durableStore: diskOf(e, o.disk ?? name), majorityTimeoutMs: 2_000 },
        }),
    rememberEntities: o.remember ?? true,
    lifecycle: e.oracle,
    settings: {
      shard: { entityRestartBackoffMs: 1_000 },
      coordinator: { persistRetryBackoffMs: 1_000, persistRetryBackoffMaxMs: 2_000 },
    },
    createBehavior: ({ entityId, passivate }) =>
      Behaviors.setup<Cmd>(() => {
        e.registry.start(entityId, name);
        let total = 0;
        return Behaviors.receive<Cmd>(
          (_c, m) => {
            if (m.type === "add") total += m.n;
            else if (m.type === "get") m.replyTo.tell({ node: name, total });
            else if (m.type === "passivate") passivate();
            else throw new Error("entity failure (test)");
          },
          (_c, sig) => {
            if (sig.type === "PostStop") e.registry.stop(entityId, name);
          },
        );
      }),
  });
  return n;
}

async function startCluster(
  e: Env,
  names: readonly string[],
  o: NodeOptions = {},
  disks: readonly string[] = names,
) {
  const seeds = names.map((n) => `${n}:2552`);
  const nodes: ClusterNode[] = [];
  for (const [i, n] of names.entries())
    nodes.push(await startNode(e, n, seeds, { ...o, disk: disks[i] ?? n }));
  const allUp = () =>
    nodes.every((n) => {
      const ms = n.cluster.state.members;
      return ms.length === names.length && ms.every((m) => m.status === "up");
    });
  expect(await e.world.runUntil(allUp, 30_000)).toBe(true);
  await e.world.advance(3_000);
  return nodes;
}

function crash(e: Env, name: string): void {
  e.world.getRuntime(name)?.scheduler.cancelAll();
  e.network.crash(name);
  e.registry.crashed(name);
  e.oracle.nodeCrashed(name);
}

async function ask(e: Env, node: ClusterNode, id: string) {
  let answer: { node: string; total: number } | undefined;
  ClusterSharding.get(node)
    .entityRefFor(Key, id)
    .ask((replyTo: ActorRef<{ node: string; total: number }>) => ({ type: "get", replyTo }), {
      timeoutMs: 5_000,
    })
    .then(
      (a) => {
        answer = a;
      },
      () => undefined,
    );
  await e.world.runUntil(() => answer !== undefined, 6_000);
  return answer;
}

/**
 * Nodes a, b and c on a journal whose coordinator appends take `delayMs` of virtual time
 * (SlowJournal).
 */
async function slowCoordinatorCluster(seed: number, delayMs: number) {
  const e0 = env(seed);
  const journal = new SlowJournal(
    new MemoryJournal(),
    e0.world,
    coordinatorPersistenceId(Key.name),
    delayMs,
  );
  const e = { ...e0, journal };
  const nodes = (await startCluster(e, ["a", "b", "c"], { remember: false })) as [
    ClusterNode,
    ClusterNode,
    ClusterNode,
  ];
  return { e, journal, nodes };
}

/** The entities of `list` that did not answer an ask through `node`. */
async function unanswered(e: Env, node: ClusterNode, list: readonly string[]) {
  const silent: string[] = [];
  for (const id of list) if ((await ask(e, node, id)) === undefined) silent.push(id);
  return silent;
}

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
const liveOf = (e: Env, list: readonly string[]) => list.filter((id) => e.registry.live.has(id));

const MODES: Mode[] = ["persistence", "ddata"];
const seedsAndModes = simSeeds([1, 2]).flatMap((seed) => MODES.map((m) => [seed, m] as const));

describe.each(seedsAndModes)("sharding remember entities (seed %i, %s)", (seed, mode) => {
  it("S11: remembered entities run again without a message after a crash, a coordinator fail-over and a full restart; passivated ones stay stopped", async () => {
    const e = env(seed, undefined, mode);
    // Four nodes, so that after two crashes the survivors are still a majority (SBR).
    const [, b] = (await startCluster(e, ["a", "b", "c", "d"])) as [ClusterNode, ClusterNode];
    const all = ids("r", 30);
    for (const id of all) ClusterSharding.get(b).entityRefFor(Key, id).tell({ type: "add", n: 1 });
    expect(await e.world.runUntil(() => liveOf(e, all).length === 30, 20_000)).toBe(true);
    // Passivated entities are forgotten: they must stay stopped through everything below.
    const passivated = all.slice(0, 3);
    for (const id of passivated)
      ClusterSharding.get(b).entityRefFor(Key, id).tell({ type: "passivate" });
    await e.world.advance(2_000);
    expect(liveOf(e, passivated)).toEqual([]);
    const kept = all.slice(3);

    // Crash of c: after downing, c's entities start elsewhere without any message.
    expect([...e.registry.live.values()]).toContain("c");
    crash(e, "c");
    const back = () => liveOf(e, kept).length === kept.length;
    expect(await e.world.runUntil(back, 60_000), `[sim ${e.world.describe()}] after crash`).toBe(
      true,
    );
    // The coordinator runs on a (oldest): crash it too.
    crash(e, "a");
    expect(
      await e.world.runUntil(back, 60_000),
      `[sim ${e.world.describe()}] after coordinator fail-over`,
    ).toBe(true);
    expect(new Set(e.registry.live.values())).toEqual(new Set(["b", "d"]));

    if (mode === "ddata") {
      // The state is on the members' disks: the coordinator's register, the shards' sets.
      const keys = [...diskOf(e, "b").entries.keys()];
      expect(keys).toContain(`sharding/${Key.name}/coordinator`);
      expect(keys.some((k) => k.startsWith(`sharding/${Key.name}/shard/`))).toBe(true);
      expect(await e.journal.highestSequenceNr(coordinatorPersistenceId(Key.name))).toBe(0);
    }
    // Full cluster restart on new nodes, same database (ddata: the same members' disks).
    crash(e, "b");
    crash(e, "d");
    expect(e.registry.live.size).toBe(0);
    const [f] = (await startCluster(e, ["f", "g"], {}, ["b", "d"])) as [ClusterNode];
    expect(
      await e.world.runUntil(back, 60_000),
      `[sim ${e.world.describe()}] after full restart`,
    ).toBe(true);
    expect(liveOf(e, passivated)).toEqual([]);
    // They are the remembered entities, not new ones started by a message.
    expect((await ask(e, f, "r-10"))?.total).toBe(0);
    expect(e.registry.violations).toEqual([]);
    e.oracle.assertNoViolations();
  });

  it("S11: after a rebalance to a joining node, the moved remembered entities run there without a message", async () => {
    const e = env(seed, undefined, mode);
    const [a] = (await startCluster(e, ["a", "b"])) as [ClusterNode];
    const all = ids("j", 40);
    for (const id of all) ClusterSharding.get(a).entityRefFor(Key, id).tell({ type: "add", n: 1 });
    expect(await e.world.runUntil(() => liveOf(e, all).length === 40, 20_000)).toBe(true);
    await startNode(e, "c", ["a:2552", "b:2552"]);
    const onC = () => [...e.registry.live.values()].filter((n) => n === "c").length;
    // Default rebalanceIntervalMs is 10 s; the least-shard strategy moves shards to c.
    expect(await e.world.runUntil(() => onC() >= 5 && liveOf(e, all).length === 40, 90_000)).toBe(
      true,
    );
    expect(e.registry.violations).toEqual([]);
    e.oracle.assertNoViolations();
  });

  it("S11: a remembered entity that stops without passivating is restarted after entityRestartBackoffMs", async () => {
    const e = env(seed, undefined, mode);
    const [a] = (await startCluster(e, ["a", "b"])) as [ClusterNode];
    ClusterSharding.get(a).entityRefFor(Key, "x").tell({ type: "add", n: 5 });
    expect(await e.world.runUntil(() => e.registry.live.has("x"), 10_000)).toBe(true);
    ClusterSharding.get(a).entityRefFor(Key, "x").tell({ type: "fail" });
    expect(await e.world.runUntil(() => !e.registry.live.has("x"), 5_000)).toBe(true);
    const stoppedAt = e.world.now;
    expect(await e.world.runUntil(() => e.registry.live.has("x"), 10_000)).toBe(true);
    expect(e.world.now - stoppedAt).toBeGreaterThanOrEqual(1_000);
    expect(e.registry.violations).toEqual([]);
    e.oracle.assertNoViolations();
  });

  it.runIf(mode === "persistence")(
    "S12: after a full restart with a changed shard extractor, remembered entities restart in their new shards",
    async () => {
      const e = env(seed);
      const [a] = (await startCluster(e, ["a", "b"], { numberOfShards: 10 })) as [ClusterNode];
      const all = ids("m", 40);
      for (const id of all)
        ClusterSharding.get(a).entityRefFor(Key, id).tell({ type: "add", n: 1 });
      expect(await e.world.runUntil(() => liveOf(e, all).length === 40, 20_000)).toBe(true);
      crash(e, "a");
      crash(e, "b");
      const [c] = (await startCluster(e, ["c", "d"], { numberOfShards: 7 })) as [ClusterNode];
      const back = () => liveOf(e, all).length === all.length;
      expect(await e.world.runUntil(back, 60_000), `[sim ${e.world.describe()}]`).toBe(true);
      // Each entity is remembered in exactly its new shard.
      const store = new JournalRememberEntitiesStore(e.journal, e.snapshots, () => 0);
      const hash = shardIdFunctions.murmur3;
      const byShard = new Map<string, string[]>();
      for (let s = 0; s < 10; s++)
        byShard.set(String(s), [...(await store.getEntities(Key.name, String(s)))]);
      for (const id of all) {
        const home = hash(id, 7);
        expect(byShard.get(home), `${id} in shard ${home}`).toContain(id);
        for (const [shard, list] of byShard) if (shard !== home) expect(list).not.toContain(id);
        let loc: { shardId: string; alive: boolean } | undefined;
        ClusterSharding.get(c)
          .getEntityLocation(Key, id)
          .then((l) => {
            loc = l;
          });
        // the query asks remote regions: run the world until it answers
        expect(await e.world.runUntil(() => loc !== undefined, 10_000)).toBe(true);
        expect(loc?.shardId).toBe(home);
        expect(loc?.alive).toBe(true);
      }
      expect(e.registry.violations).toEqual([]);
      e.oracle.assertNoViolations();
    },
  );
});

describe.each(simSeeds([1, 2]))("sharding persistent coordinator state (seed %i)", (seed) => {
  it("S14: the coordinator cannot persist: known shards keep routing; a new shard waits and is served once the store is back", async () => {
    const journal = new SwitchableJournal(new MemoryJournal());
    const e = env(seed, journal);
    const [, b] = (await startCluster(e, ["a", "b"], { remember: false })) as [
      ClusterNode,
      ClusterNode,
    ];
    const known = ids("k", 10);
    for (const id of known)
      ClusterSharding.get(b).entityRefFor(Key, id).tell({ type: "add", n: 1 });
    await e.world.advance(2_000);
    const shardOf = (id: string) => shardIdFunctions.murmur3(id, 12);
    const knownShards = new Set(known.map(shardOf));
    const fresh = ids("n", 200).find((id) => !knownShards.has(shardOf(id))) as string;
    journal.down = true;
    for (const id of known) expect((await ask(e, b, id))?.total).toBe(1);
    ClusterSharding.get(b).entityRefFor(Key, fresh).tell({ type: "add", n: 7 });
    await e.world.advance(10_000);
    expect(e.registry.live.has(fresh), "a shard must not start before its home is durable").toBe(
      false,
    );
    journal.down = false;
    expect(await e.world.runUntil(() => e.registry.live.has(fresh), 30_000)).toBe(true);
    expect((await ask(e, b, fresh))?.total).toBe(7);
    expect(e.registry.violations).toEqual([]);
    e.oracle.assertNoViolations();
  });

  it("a coordinator handed over while its write is in flight stops only after the write: its successor loads every event", async () => {
    // The write of a coordinator event takes 300 ms. The oldest member leaves gracefully:
    // its region hands its shards off (coordinator writes), then the singleton is handed
    // over while the coordinator's last write is still in flight. The successor must not
    // load the journal before that write landed (it would go on from a stale state and
    // its first write would collide with the old one's).
    const { e, journal, nodes } = await slowCoordinatorCluster(seed, 300);
    const [a, b, c] = nodes;
    const all = ids("h", 24);
    for (const id of all) ClusterSharding.get(c).entityRefFor(Key, id).tell({ type: "add", n: 1 });
    await e.world.advance(5_000);
    let stopped = false;
    void a.shutdown("user").then(() => {
      stopped = true;
    });
    expect(await e.world.runUntil(() => stopped, 30_000), "a's shutdown").toBe(true);
    crash(e, "a");
    expect(
      await unanswered(e, b, all),
      `[sim ${e.world.describe()}] entities that did not answer`,
    ).toEqual([]);
    expect(journal.conflicts, "writes of two coordinators collided").toBe(0);
    expect(e.registry.violations).toEqual([]);
    e.oracle.assertNoViolations();
  });

  it("a coordinator restarted by a journal conflict serves every shard again", async () => {
    const { e, journal, nodes } = await slowCoordinatorCluster(seed, 10);
    const [, b, c] = nodes;
    const all = ids("r", 24);
    for (const id of all.slice(0, 12))
      ClusterSharding.get(c).entityRefFor(Key, id).tell({ type: "add", n: 1 });
    await e.world.advance(3_000);
    journal.conflictNext = true;
    for (const id of all.slice(12))
      ClusterSharding.get(c).entityRefFor(Key, id).tell({ type: "add", n: 1 });
    await e.world.advance(100);
    expect(journal.conflicts, "the conflict was injected").toBe(1);
    expect(
      await unanswered(e, b, all),
      `[sim ${e.world.describe()}] entities that did not answer`,
    ).toEqual([]);
    expect(e.registry.violations).toEqual([]);
    e.oracle.assertNoViolations();
  });

  it("allocations survive a full cluster restart: the new coordinator recovers them from the journal", async () => {
    const e = env(seed);
    const [a] = (await startCluster(e, ["a", "b"], { remember: false })) as [ClusterNode];
    for (const id of ids("p", 20))
      ClusterSharding.get(a).entityRefFor(Key, id).tell({ type: "add", n: 1 });
    await e.world.advance(3_000);
    const pid = coordinatorPersistenceId(Key.name);
    const written = await e.journal.highestSequenceNr(pid);
    expect(written).toBeGreaterThan(2); // regions registered + shard homes allocated
    crash(e, "a");
    crash(e, "b");
    const [c] = (await startCluster(e, ["c", "d"], { remember: false })) as [ClusterNode];
    // The new coordinator replayed the old allocations, found their regions gone (their
    // members are not in this cluster) and wrote their termination after the old events.
    expect(await e.journal.highestSequenceNr(pid)).toBeGreaterThan(written);
    const later = await e.journal.read(pid, written + 1, Number.MAX_SAFE_INTEGER);
    const types = later.map(
      (pe) =>
        decodeShardingData(pid, pe.sequenceNr, pe.serializerId, pe.bytes, isCoordinatorEvent).type,
    );
    // Both old regions were recovered from the journal and then terminated.
    expect(types.filter((t) => t === "shard-region-terminated").length).toBe(2);
    // Entities are plain (not event-sourced, not remembered): new incarnations, total 0.
    for (const id of ids("p", 20)) expect((await ask(e, c, id))?.total).toBe(0);
    expect(e.registry.violations).toEqual([]);
    e.oracle.assertNoViolations();
  });
});
