/**
 * Helpers of the sharding simulator scenarios: cluster nodes running a Counter entity
 * type, every shard and entity reported to a ShardingOracle (shardkit/testing), and the
 * small fault tools (crash, restart) the scenarios share.
 */
import { expect } from "vitest";
import { type ActorRef, Behaviors, Effect, EventSourcedBehavior } from "../../src/actor/index.js";
import {
  ClusterNode,
  type ClusterNodeOptions,
  ClusterSharding,
  EntityTypeKey,
  type ShardedEntityOptions,
  type ShardingLifecycleListener,
} from "../../src/api/index.js";
import type { ShardLeaseSettings } from "../../src/core/shard/shard-lease-machine.js";
import type { MemoryJournal } from "../../src/persistence/memory/memory-journal.js";
import type { MemoryLeaseStore } from "../../src/persistence/memory/memory-lease.js";
import { FencedWriteError, type JournalEvent, type WriteFence } from "../../src/ports/journal.js";
import { SimNetwork, SimWorld, type SimWorldOptions } from "../../src/runtime/sim/index.js";
import { ShardingOracle } from "../../src/testing/index.js";
import { FAST } from "../cluster/sim-cluster.js";
import { JournalWrapper } from "../support/journal-wrapper.js";

export type Counter =
  | { type: "add"; n: number }
  | { type: "get"; replyTo: ActorRef<{ node: string; total: number }> }
  | { type: "passivate" };
export const CounterKey = EntityTypeKey<Counter>("Counter");

/** Live Counter entities: id -> node. */
export function liveCounters(oracle: ShardingOracle): Map<string, string> {
  return oracle.liveEntities(CounterKey.name);
}

/** One shard or entity start/stop, as a recording listener saw it. */
export interface LifecycleEvent {
  readonly what: "shard-started" | "shard-stopped" | "entity-started" | "entity-stopped";
  readonly typeName: string;
  readonly id: string;
  /** Host of the reporting node. */
  readonly node: string;
  readonly atMs: number;
}

/** A listener that forwards to `oracle` and appends every report to `events`. */
export function recording(
  world: SimWorld,
  oracle: ShardingOracle,
  events: LifecycleEvent[],
): ShardingLifecycleListener {
  const host = (node: string) => /@([^:/#]+):/.exec(node)?.[1] ?? node;
  const add = (what: LifecycleEvent["what"], typeName: string, id: string, node: string) =>
    events.push({ what, typeName, id, node: host(node), atMs: world.now });
  return {
    shardStarted: (t, id, node) => {
      add("shard-started", t, id, node);
      oracle.shardStarted(t, id, node);
    },
    shardStopped: (t, id, node) => {
      add("shard-stopped", t, id, node);
      oracle.shardStopped(t, id, node);
    },
    entityStarted: (t, id, node, shard) => {
      add("entity-started", t, id, node);
      oracle.entityStarted(t, id, node, shard);
    },
    entityStopped: (t, id, node, shard) => {
      add("entity-stopped", t, id, node);
      oracle.entityStopped(t, id, node, shard);
    },
  };
}

/** A world, its network and an oracle that names the world (seed) in its errors. */
export function simSharding(seed: number, options: Omit<SimWorldOptions, "seed"> = {}) {
  const world = new SimWorld({ seed, ...options });
  const network = new SimNetwork(world);
  const oracle = newOracle(world);
  return { world, network, oracle };
}

export function newOracle(world: SimWorld): ShardingOracle {
  return new ShardingOracle({ now: () => world.now, describe: () => world.describe() });
}

export interface NodeExtras {
  readonly roles?: string[];
  readonly role?: string;
  readonly coordinatorRole?: string;
  readonly appVersion?: string;
  readonly shardSettings?: Record<string, unknown>;
  readonly coordinatorSettings?: Record<string, unknown>;
  readonly allocationStrategy?: ShardedEntityOptions<Counter>["allocationStrategy"];
  /** Name of the simulated process (default: the node name; restarts need a new one). */
  readonly runtimeName?: string;
  /** false: start the node without sharding. */
  readonly sharding?: boolean;
  /** The entity type (default CounterKey). */
  readonly typeKey?: EntityTypeKey<Counter>;
  /** Default 20. */
  readonly numberOfShards?: number;
  /** The lifecycle listener (default: the oracle). */
  readonly lifecycle?: ShardingLifecycleListener;
  /**
   * Shard leases on a shared store: the Counter is then event-sourced on `journal` (a
   * FencedJournal) with the shard's fence.
   */
  readonly lease?: SimLeases;
  /** Clock drift of the node's runtime (ppm; negative: slower than world time). */
  readonly clockDriftPpm?: number;
  /** Downing settings (default: the split brain resolver, stableAfterMs 2 s). */
  readonly downing?: ClusterNodeOptions["downing"];
}

/** The shared "database" of a lease scenario: a lease store and a checked journal. */
export interface SimLeases {
  readonly store: MemoryLeaseStore;
  readonly journal: FencedJournal;
  readonly settings?: Partial<ShardLeaseSettings>;
}

/**
 * The shared journal of a lease scenario, checked by the oracle: every fenced append the
 * journal accepts is reported with the lease store's newest token at that instant (the
 * memory journal applies an append synchronously when called), so a write by a holder
 * that lost its lease is a violation ("no event written by a stale token"). Refused
 * appends (FencedWriteError) are counted.
 */
export class FencedJournal extends JournalWrapper<MemoryJournal> {
  refused = 0;
  constructor(
    inner: MemoryJournal,
    private readonly leases: MemoryLeaseStore,
    private readonly oracle: ShardingOracle,
  ) {
    super(inner);
  }

  override append(
    persistenceId: string,
    expectedSeqNr: number,
    events: readonly JournalEvent[],
    fence?: WriteFence,
  ): Promise<void> {
    const p = this.inner.append(persistenceId, expectedSeqNr, events, fence);
    // the memory journal has applied (or refused) the append by now
    const newest = fence === undefined ? undefined : this.leases.newestToken(fence.key);
    return p.then(
      () => {
        if (fence !== undefined)
          this.oracle.fencedWrite(fence.key, fence.token, newest ?? 0, persistenceId);
      },
      (e: unknown) => {
        if (e instanceof FencedWriteError) this.refused++;
        throw e;
      },
    );
  }
  advanceFence(fence: WriteFence): Promise<void> {
    return this.inner.advanceFence(fence);
  }
}

const enc = new TextEncoder();
const dec = new TextDecoder();
const addedCodec = {
  encode: (n: number) => ({ serializerId: 1, bytes: enc.encode(String(n)) }),
  decode: (_id: number, bytes: Uint8Array) => Number(dec.decode(bytes)),
};

/** A cluster node `name` (listening on name:2552) running the Counter type. */
export async function startNode(
  world: SimWorld,
  network: SimNetwork,
  name: string,
  seeds: string[],
  oracle: ShardingOracle,
  extras: NodeExtras = {},
): Promise<ClusterNode> {
  let node: ClusterNode | undefined;
  ClusterNode.start({
    systemName: "shop",
    host: name,
    port: 2552,
    seedNodes: seeds,
    settings: FAST,
    failureDetector: { acceptableHeartbeatPauseMs: 1_000, firstHeartbeatEstimateMs: 200 },
    downing: extras.downing ?? { stableAfterMs: 2_000 },
    roles: extras.roles,
    appVersion: extras.appVersion,
    runtime: world.createRuntime(
      extras.runtimeName ?? name,
      extras.clockDriftPpm === undefined ? {} : { clockDriftPpm: extras.clockDriftPpm },
    ),
    transport: network.transportFor(name),
  }).then((n) => {
    node = n;
  });
  await world.runUntil(() => node !== undefined, 5_000);
  const n = node as ClusterNode;
  if (extras.sharding !== false) initCounter(n, name, oracle, extras);
  return n;
}

/**
 * The state store of the Counter type in these scenarios: "regions" (the default), or
 * "ddata" when SHARDKIT_SIM_STATE_STORE=ddata (`npm run sim:ddata` runs every scenario so).
 */
export const SIM_STATE_STORE: "regions" | "ddata" =
  process.env.SHARDKIT_SIM_STATE_STORE === "ddata" ? "ddata" : "regions";

/** Starts the Counter type (or `extras.typeKey`) on `node`. */
export function initCounter(
  node: ClusterNode,
  name: string,
  oracle: ShardingOracle,
  extras: NodeExtras = {},
) {
  return ClusterSharding.get(node).init({
    typeKey: extras.typeKey ?? CounterKey,
    numberOfShards: extras.numberOfShards ?? 20,
    ...(SIM_STATE_STORE === "ddata" ? { stateStoreMode: "ddata" as const } : {}),
    role: extras.role,
    coordinatorRole: extras.coordinatorRole,
    allocationStrategy: extras.allocationStrategy,
    lifecycle: extras.lifecycle ?? oracle,
    settings: { shard: extras.shardSettings, coordinator: extras.coordinatorSettings },
    ...(extras.lease === undefined
      ? {}
      : {
          lease: {
            provider: extras.lease.store,
            journals: [extras.lease.journal],
            ...extras.lease.settings,
          },
        }),
    createBehavior: ({ passivate, entityId, fence }) =>
      extras.lease !== undefined
        ? EventSourcedBehavior.create<Counter, number, number>({
            persistenceId: `Counter|${entityId}`,
            emptyState: 0,
            journal: extras.lease.journal,
            ...(fence === undefined ? {} : { fence }),
            eventCodec: addedCodec,
            eventHandler: (total, n) => total + n,
            commandHandler: (total, m) => {
              if (m.type === "add") return Effect.persist<number, number>(m.n);
              if (m.type === "get")
                return Effect.none<number, number>().thenReply(m.replyTo, () => ({
                  node: name,
                  total,
                }));
              passivate();
              return Effect.none<number, number>();
            },
          })
        : Behaviors.setup<Counter>(() => {
            let total = 0;
            return Behaviors.receiveMessage<Counter>((m) => {
              if (m.type === "add") total += m.n;
              else if (m.type === "get") m.replyTo.tell({ node: name, total });
              else passivate();
            });
          }),
  });
}

/** True when `node` sees exactly `size` members, all Up. */
export function allUp(node: ClusterNode, size: number): boolean {
  const members = node.cluster.state.members;
  return members.length === size && members.every((m) => m.status === "up");
}

/**
 * Starts one node per name (all seeding from `seeds`), requires every node to see all of them
 * Up, then lets the regions register with the coordinator.
 */
export async function startCluster(
  world: SimWorld,
  network: SimNetwork,
  oracle: ShardingOracle,
  names: readonly string[],
  seeds: string[] = names.map((n) => `${n}:2552`),
  extras: (name: string) => NodeExtras = () => ({}),
): Promise<ClusterNode[]> {
  const nodes: ClusterNode[] = [];
  for (const n of names) nodes.push(await startNode(world, network, n, seeds, oracle, extras(n)));
  expect(await world.runUntil(() => nodes.every((n) => allUp(n, names.length)), 30_000)).toBe(true);
  await world.advance(5_000);
  return nodes;
}

/** Asks entity `id` for its total and node (throws, naming the seed, without an answer). */
export async function totalOf(
  world: SimWorld,
  node: ClusterNode,
  id: string,
  typeKey: EntityTypeKey<Counter> = CounterKey,
  askTimeoutMs = 10_000,
) {
  let answer: { node: string; total: number } | undefined;
  let failure: unknown;
  ClusterSharding.get(node)
    .entityRefFor(typeKey, id)
    .ask((replyTo: ActorRef<{ node: string; total: number }>) => ({ type: "get", replyTo }), {
      timeoutMs: askTimeoutMs,
    })
    .then(
      (a) => {
        answer = a;
      },
      (e: unknown) => {
        failure = e;
      },
    );
  const ok = await world.runUntil(
    () => answer !== undefined || failure !== undefined,
    askTimeoutMs + 5_000,
  );
  if (!ok || answer === undefined)
    throw new Error(
      `[sim ${world.describe()}] no answer from ${id}: ${String(failure ?? "no reply")}`,
    );
  return answer;
}

/** totalOf, retried (asks to shards that are moving may time out), or undefined. */
export async function totalOfEventually(
  world: SimWorld,
  node: ClusterNode,
  id: string,
  attempts = 6,
  typeKey: EntityTypeKey<Counter> = CounterKey,
) {
  let r: { node: string; total: number } | undefined;
  for (let i = 0; r === undefined && i < attempts; i++)
    r = await totalOf(world, node, id, typeKey).catch(() => undefined);
  return r;
}

/**
 * kill -9 of the process `runtimeName` on network node `name`: its timers stop, its
 * network endpoints vanish, and the oracle forgets what it ran. Work already handed to
 * the node in this instant (a `tell` from the test queues a mailbox run as a microtask,
 * which cancelling the node's timers does not reach) runs first, as it would have before
 * the kill; after that the node runs nothing.
 */
export async function crashNode(
  world: SimWorld,
  network: SimNetwork,
  oracle: ShardingOracle,
  name: string,
  runtimeName: string = name,
): Promise<void> {
  await world.advance(0);
  world.getRuntime(runtimeName)?.scheduler.cancelAll();
  if (!network.isCrashed(name)) network.crash(name);
  oracle.nodeCrashed(name);
}

/** Settles a promise inside the simulation (throws, naming the seed, if it does not). */
export async function settle<T>(world: SimWorld, p: Promise<T>, limitMs = 30_000): Promise<T> {
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
  await world.runUntil(() => out !== undefined || err !== undefined, limitMs);
  if (out === undefined) throw err ?? new Error(`[sim ${world.describe()}] did not settle`);
  return out.v;
}
