/**
 * Sharding benchmarks on the real runtime, over TCP on 127.0.0.1. Every single-node
 * figure uses a fresh one-member cluster in this process (seed = itself, fast settings).
 *
 * - sharding.local.tell.throughput: 1 000 active entities, tells through EntityRefs
 *   created once; messages counted in the entities, all processed (msgs/s).
 * - sharding.metrics.overhead.pct: the same local tells (1 M per run) with the node's
 *   metrics off and on (metricsOf(node) before init, one scrape at the end), in off/on
 *   pairs, each rate in messages per CPU second of this process (stable on a shared
 *   machine); median over the pairs of (off - on) / off in % (docs/observability.md).
 * - remote.tracing.overhead.pct: tells from EntityRefs on one node to entities on another
 *   (the sender has no role, so every message takes the remote hop), with
 *   `tracing: { enabled: true }` on both nodes but no active span, vs tracing off. Two such
 *   pairs of nodes (one traced, one not) run side by side in this process (TCP on
 *   127.0.0.1), with a tracer provider and an AsyncLocalStorage context manager registered
 *   (what an application's SDK installs; test/support/otel-memory.ts), so only shardkit's
 *   setting differs. Batches of 5 000 tells alternate between the pairs; rates per CPU
 *   second of this process; median over blocks of (off - on) / off in %
 *   (docs/observability.md, "Tracing").
 * - sharding.activation.rate: one message each to 50 000 new entity ids; time until all
 *   have been created and have processed it (entities/s).
 * - sharding.idle.bytes: heapUsed delta (after gc) per idle entity, 100 000 entities of a
 *   shared behavior, each started by one message (user state excluded); one run.
 * - sharding.newshard.latency.us: p50 from the first message to a never-used shard until
 *   the entity received it (10 000 shards, 200 sequential asks, one new shard each).
 * - sharding.cluster3.tell.throughput / .ask.p50.us / .ask.p99.us: three processes (this
 *   one is the seed; two children run this file with SHARDKIT_BENCH_SHARDING_CHILD=1).
 *   Tells go from this process to 1 000 entities spread over the three members, counted
 *   in the entities (children report counts over stdin/stdout); asks: 1 outstanding, to
 *   random entities of the 1 000 (about a third of them local), 10 000 measured after
 *   10 000 warm-up asks.
 * - sharding.schema.local.tell.zod.throughput / sharding.schema.cluster3.tell.zod.throughput:
 *   sharding.local.tell and sharding.cluster3.tell with a zod schema on the entity type
 *   (docs/evolution.md): the price of checking every message.
 * - sharding.rebalance100.ms / .lost: this process and one child host 100 entities, one
 *   per shard (50/50), with rebalanceIntervalMs 500 (default 10 000). Both send a steady
 *   load (50 messages every 10 ms each, round-robin, a sequence number per sender and
 *   entity). A third process joins; .ms is the time from the moment this process (the
 *   coordinator's) sees it Up until getClusterShardingStats shows all 100 shards on 3
 *   regions, each within [ceil(100/3) - 1, ceil(100/3)] (where least-shard allocation
 *   stops). The load runs 0.5 s more, stops, drains; every process then reports the
 *   sequence numbers its entities received (a per-process table, so an entity's record
 *   survives its hand-off) and .lost = sent - distinct (entity, sender, seq) received.
 * - sharding.failover.default.ms / .fast.ms: 200 entities over three processes (this one
 *   and two children); the child hosting the most of them is killed with SIGKILL; time
 *   from the kill until every entity has answered a "where" ask again (asks repeated
 *   every 50 ms per entity, each with its own 5 s timeout). "default": every membership
 *   setting at its default (heartbeat 1 s, acceptable pause 3 s, SBR stableAfterMs 20 s,
 *   gossip / leader / reaper 1 s); "fast": FAST_PROFILE of bench/membership.ts (heartbeat
 *   200 ms, acceptable pause 1 s, stableAfterMs 2 s, ...; docs/cluster-scale.md). Both
 *   only start faster (periodicTasksInitialDelayMs 0, seedNodeTimeoutMs 500); sharding
 *   settings are the defaults.
 *
 * - sharding.failover.lease.ms / .lease.fast.ms: the same failover with shard leases on
 *   SQLite (one file shared by the three processes), membership settings and lease
 *   settings "default" / "fast" (ClusterProfiles and ShardLeaseProfiles). With leases the
 *   coordinator moves an unreachable member's shards (a refused connection counts) without
 *   waiting for its removal; the new home starts them once their leases expired.
 * - sharding.lease.overhead.pct: local tell throughput with shard leases (SQLite) vs
 *   without, (off - on) / off in %, medians of 3 alternating runs each.
 *
 * The whole group is meant to take under 2 minutes; the default failover alone is about
 * 60 s: it waits out stableAfterMs (20 s) and then the shards' removal margin
 * (stableAfterMs + the down-all-when-unstable bound, 35 s), during which the downed side
 * may still run them.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { type ActorRef, type Behavior, Behaviors } from "../src/actor/index.js";
import { ShardLeaseProfiles } from "../src/api/cluster-profiles.js";
import {
  ClusterNode,
  type ClusterNodeOptions,
  ClusterSharding,
  type EntityRef,
  EntityTypeKey,
} from "../src/api/index.js";
import { murmur3ShardId } from "../src/core/sharding/shard-id.js";
import { metricsOf } from "../src/observability/index.js";
import { prometheusText } from "../src/observability/prometheus-text.js";
import {
  type SqlitePersistence,
  sqlitePersistence,
} from "../src/persistence/sqlite/sqlite-persistence.js";
import { createNodeRuntime } from "../src/runtime/node/index.js";
import { type Child, kill, request, spawnNode, waitFor } from "../test/support/child-process.js";
import { installMemoryTracing } from "../test/support/otel-memory.js";
import {
  type BenchGroup,
  gc,
  hasGc,
  latencyHistogram,
  median,
  percentile,
  repeat,
  wants,
  wantsHistogram,
} from "./harness.js";
import { FAST_PROFILE } from "./membership.js";

const CHILD_ENV = "SHARDKIT_BENCH_SHARDING_CHILD";
const SYSTEM = "benchsharding";
const FAST_SETTINGS = {
  periodicTasksInitialDelayMs: 0,
  gossipIntervalMs: 200,
  leaderActionsIntervalMs: 200,
  heartbeatIntervalMs: 200,
  seedNodeTimeoutMs: 500,
};
/** Settings that only speed up forming the cluster (they do not affect failover). */
const FORMATION_SETTINGS = { periodicTasksInitialDelayMs: 0, seedNodeTimeoutMs: 500 };
/**
 * Cluster profiles: "bench" (the throughput parts: FAST_SETTINGS, failure detector and
 * downing defaults), "default" (every failover-relevant setting at its default: heartbeat
 * 1 s, acceptable pause 3 s, SBR stableAfterMs 20 s, gossip / leader / reaper 1 s) and
 * "fast" (FAST_PROFILE of bench/membership.ts, documented in docs/cluster-scale.md).
 */
type Profile = "bench" | "default" | "fast";
const PROFILES: Record<
  Profile,
  Pick<ClusterNodeOptions, "settings" | "failureDetector" | "downing">
> = {
  bench: { settings: FAST_SETTINGS },
  default: { settings: FORMATION_SETTINGS },
  fast: {
    settings: { ...FAST_PROFILE.settings, ...FORMATION_SETTINGS },
    failureDetector: FAST_PROFILE.failureDetector,
    downing: FAST_PROFILE.downing,
  },
};
const TELL_ENTITIES = 1_000;
/** Long enough that JIT warm-up of a fresh node is a small part of the figure (~1 s a run). */
const TELL_TOTAL = 2_000_000;
const TELL_BATCH = 50_000;
/** Metrics overhead: off/on pairs and messages per run. */
const METRICS_PAIRS = 6;
const METRICS_TELL_TOTAL = 1_000_000;
/**
 * Tracing overhead: messages per batch (all in flight at once), warm-up batches per mode,
 * blocks (one figure each) and batches per mode in a block.
 */
const TRACING_TELL_BATCH = 5_000;
const TRACING_WARMUP_BATCHES = 20;
const TRACING_BLOCKS = 9;
const TRACING_BLOCK_BATCHES = 20;
const ACTIVATION_N = 50_000;
const IDLE_N = 100_000;
const IDLE_RUNS = 1;
const NEWSHARD_SHARDS = 10_000;
const NEWSHARD_SAMPLES = 200;
const NEWSHARD_WARMUP = 20;
const C3_ENTITIES = 1_000;
const C3_TELL_TOTAL = 100_000;
const C3_WINDOW = 20_000;
const C3_ASK_SAMPLES = 10_000;
/**
 * Asks before the measured ones. The children spent the tell runs on another path: with
 * 500 warm-up asks the remote ask path was still being compiled during the window (p99
 * 1.5-2.5 ms, slow asks spread evenly through it), with 10 000 it is not (docs/performance.md).
 */
const C3_ASK_WARMUP = 10_000;
const ASK_TIMEOUT_MS = 30_000;
/** Rebalance part: coordinator rebalance tick (default 10 s), shortened for the bench. */
const REBALANCE_INTERVAL_MS = 500;
const REBALANCE_SHARDS = 100;
/** Steady load per sender (this process and the first child): messages per tick. */
const REBALANCE_PER_TICK = 50;
const LOAD_TICK_MS = 10;
const REBALANCE_LOAD_BEFORE_MS = 1_000;
const REBALANCE_LOAD_AFTER_MS = 500;
const REBALANCE_POLL_MS = 50;
const REBALANCE_LIMIT_MS = 30_000;
const REBALANCE_DRAIN_LIMIT_MS = 5_000;
/** Failover part. */
const FAILOVER_ENTITIES = 200;
const FAILOVER_SETTLE_MS = 2_000;
const FAILOVER_PROBE_INTERVAL_MS = 50;
const FAILOVER_PROBE_TIMEOUT_MS = 5_000;
const FAILOVER_LIMIT_MS = 100_000;
const START_TIMEOUT_MS = 30_000;

type Msg =
  | { readonly t: "n" }
  | { readonly t: "ping"; readonly replyTo: ActorRef<number> }
  | { readonly t: "where"; readonly replyTo: ActorRef<number> };
const Key = EntityTypeKey<Msg>("BenchEntity");
/**
 * The same type with a zod schema (docs/evolution.md): messages from other members are
 * checked by the receiving region, local tells at the call site.
 */
const replyRef = z.custom<ActorRef<number>>((v) => typeof v === "object" && v !== null);
const ZodMsg = z.discriminatedUnion("t", [
  z.object({ t: z.literal("n") }),
  z.object({ t: z.literal("ping"), replyTo: replyRef }),
  z.object({ t: z.literal("where"), replyTo: replyRef }),
]);
const ZodKey = EntityTypeKey<Msg>("BenchEntity", { schema: ZodMsg });
type Schema = "none" | "zod";
const keyOf = (schema: Schema) => (schema === "zod" ? ZodKey : Key);

const tick = () => new Promise<void>((r) => setImmediate(r));
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Counts processed messages in this process (shared by every entity). */
let processed = 0;
const sharedBehavior = Behaviors.receiveMessage<Msg>((m) => {
  processed++;
  if (m.t === "ping") m.replyTo.tell(performance.now());
  else if (m.t === "where") m.replyTo.tell(process.pid);
});

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr !== null ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

async function startNode(
  port: number,
  seedPort: number,
  profile: Profile = "bench",
  logLevel: "warn" | "error" = "warn",
): Promise<ClusterNode> {
  return ClusterNode.start({
    systemName: SYSTEM,
    host: "127.0.0.1",
    port,
    seedNodes: [`127.0.0.1:${seedPort}`],
    ...PROFILES[profile],
    runtime: createNodeRuntime({ logLevel }),
    handleSignals: false,
  });
}

async function waitUntil(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (!cond()) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

async function waitProcessed(target: number, timeoutMs = 60_000): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (processed < target) {
    if (performance.now() > end)
      throw new Error(`only ${processed} of ${target} messages processed`);
    await tick();
  }
}

interface Single {
  node: ClusterNode;
  sharding: ClusterSharding;
}

/** Shard leases on one SQLite file per path (each process opens its own connection). */
const leaseDbs = new Map<string, SqlitePersistence>();
function shardLeases(path: string | undefined, profile: "default" | "fast" = "default") {
  if (path === undefined) return {};
  let db = leaseDbs.get(path);
  if (db === undefined) {
    db = sqlitePersistence({ path });
    leaseDbs.set(path, db);
  }
  return { lease: { provider: db.leases, ...ShardLeaseProfiles[profile] } };
}

/** A temp directory for a lease database, removed by the returned cleanup. */
function leaseDir(): { path: string; cleanup: () => Promise<void> } {
  const dir = mkdtempSync(join(tmpdir(), "shardkit-bench-lease-"));
  const path = join(dir, "leases.db");
  return {
    path,
    cleanup: async () => {
      await leaseDbs.get(path)?.close();
      leaseDbs.delete(path);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function withSingle<T>(
  numberOfShards: number,
  fn: (s: Single) => Promise<T>,
  o: {
    readonly key?: EntityTypeKey<Msg>;
    readonly metrics?: boolean;
    /** Shard leases on this SQLite file (see shardLeases). */
    readonly leasePath?: string;
  } = {},
): Promise<T> {
  const key = o.key ?? Key;
  const port = await freePort();
  const node = await startNode(port, port);
  try {
    await waitUntil(() => node.cluster.selfMember?.status === "up", START_TIMEOUT_MS, "member up");
    if (o.metrics) metricsOf(node);
    const sharding = ClusterSharding.get(node);
    sharding.init({
      typeKey: key,
      numberOfShards,
      createBehavior: () => sharedBehavior,
      ...shardLeases(o.leasePath),
    });
    return await fn({ node, sharding });
  } finally {
    await node.system.terminate();
  }
}

interface LocalTellOptions {
  /** The entity type's schema (default none). */
  readonly schema?: Schema;
  /** Metrics on (metricsOf(node)), and a scrape checked at the end. */
  readonly metrics?: boolean;
  /** Messages sent (default TELL_TOTAL). */
  readonly total?: number;
  /** Rate per second of this process's CPU time instead of wall time. */
  readonly perCpu?: boolean;
  /** Shard leases on this SQLite file. */
  readonly leasePath?: string;
}

/**
 * Local tells through EntityRefs; messages per wall-clock second, or with `perCpu` per
 * second of this process's CPU time (user + system), which a loaded shared machine
 * disturbs much less than wall time.
 */
/** Refs to the TELL_ENTITIES entities `e-0`... of `key`, each started by one answered ping. */
async function startedRefs(
  sharding: ClusterSharding,
  key: EntityTypeKey<Msg>,
): Promise<EntityRef<Msg>[]> {
  const refs: EntityRef<Msg>[] = [];
  for (let i = 0; i < TELL_ENTITIES; i++) refs.push(sharding.entityRefFor(key, `e-${i}`));
  await Promise.all(
    refs.map((r) =>
      r.ask((replyTo: ActorRef<number>) => ({ t: "ping", replyTo }), {
        timeoutMs: ASK_TIMEOUT_MS,
      }),
    ),
  );
  return refs;
}

async function localTell(o: LocalTellOptions = {}): Promise<number> {
  const key = keyOf(o.schema ?? "none");
  const metrics = o.metrics ?? false;
  const total = o.total ?? TELL_TOTAL;
  return withSingle(
    100,
    async ({ node, sharding }) => {
      const refs = await startedRefs(sharding, key);
      const msg: Msg = { t: "n" };
      const base = processed;
      const t0 = performance.now();
      const cpu0 = process.cpuUsage();
      for (let sent = 0; sent < total; sent += TELL_BATCH) {
        for (let i = 0; i < TELL_BATCH; i++) (refs[i % TELL_ENTITIES] as EntityRef<Msg>).tell(msg);
        await waitProcessed(base + sent + TELL_BATCH);
      }
      const cpu = process.cpuUsage(cpu0);
      const rate = o.perCpu
        ? (total / (cpu.user + cpu.system)) * 1e6
        : (total / (performance.now() - t0)) * 1000;
      // with metrics on, a scrape must work and see the entities
      if (
        metrics &&
        !prometheusText(metricsOf(node).registry.collect()).includes("shardkit_sharding_entities")
      )
        throw new Error("metrics on, but no sharding series");
      return rate;
    },
    { key, metrics, ...(o.leasePath === undefined ? {} : { leasePath: o.leasePath }) },
  );
}

/**
 * Local tell throughput with metrics off and on, in pairs (off then on, order swapped every
 * other pair so that warming up favours neither); the overhead is the median over the
 * pairs of (off - on) / off in %, which cancels most of a slow drift of the machine's load.
 */
async function metricsOverhead(): Promise<{ off: number; on: number; pct: number }> {
  const off: number[] = [];
  const on: number[] = [];
  const pct: number[] = [];
  await localTell(); // warm-up
  for (let i = 0; i < METRICS_PAIRS; i++) {
    const first = i % 2 === 0;
    const a = await localTell({ metrics: !first, total: METRICS_TELL_TOTAL, perCpu: true });
    const b = await localTell({ metrics: first, total: METRICS_TELL_TOTAL, perCpu: true });
    const [o, m] = first ? [a, b] : [b, a];
    off.push(o);
    on.push(m);
    pct.push(((o - m) / o) * 100);
  }
  return { off: median(off), on: median(on), pct: median(pct) };
}

/** A sender and a host node (one cluster of two, in this process) for the tracing bench. */
interface TellPair {
  readonly refs: EntityRef<Msg>[];
  readonly stop: () => Promise<void>;
}

/**
 * Two nodes in this process (TCP on 127.0.0.1), tracing enabled (no active span) or off
 * on both; the sender has no role, so every tell takes the remote hop to the host.
 */
async function tellPair(tracing: boolean): Promise<TellPair> {
  const [pb, pa] = [await freePort(), await freePort()];
  const start = (port: number, roles: string[]) =>
    ClusterNode.start({
      systemName: SYSTEM,
      host: "127.0.0.1",
      port,
      seedNodes: [`127.0.0.1:${pb}`],
      roles,
      ...PROFILES.bench,
      runtime: createNodeRuntime({ logLevel: "warn" }),
      handleSignals: false,
      ...(tracing ? { tracing: { enabled: true } } : {}),
    });
  const host = await start(pb, ["worker"]);
  const sender = await start(pa, []);
  await waitUntil(
    () =>
      [host, sender].every(
        (n) =>
          n.cluster.state.members.length === 2 &&
          n.cluster.state.members.every((m) => m.status === "up"),
      ),
    START_TIMEOUT_MS,
    "two members up",
  );
  for (const n of [host, sender])
    ClusterSharding.get(n).init({
      typeKey: Key,
      role: "worker",
      numberOfShards: 100,
      createBehavior: () => sharedBehavior,
    });
  const refs = await startedRefs(ClusterSharding.get(sender), Key);
  return {
    refs,
    stop: async () => {
      await sender.system.terminate();
      await host.system.terminate();
    },
  };
}

/** Sends one batch of tells through `pair` and waits until all are processed: CPU µs. */
async function tellBatch(pair: TellPair): Promise<number> {
  const msg: Msg = { t: "n" };
  const base = processed;
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < TRACING_TELL_BATCH; i++)
    (pair.refs[i % TELL_ENTITIES] as EntityRef<Msg>).tell(msg);
  await waitProcessed(base + TRACING_TELL_BATCH);
  const cpu = process.cpuUsage(cpu0);
  return cpu.user + cpu.system;
}

/**
 * Remote tells with tracing off and on (no active span): both pairs run side by side in
 * this process, and batches alternate between them (off, on, on, off, ...), so that drift
 * of the machine (a neighbour's load, CPU frequency) and of the JIT falls on both alike.
 * Each block of TRACING_BLOCK_BATCHES batches per mode gives one (off - on) / off in % of
 * the rates per CPU second; the figure is the median over the blocks.
 */
async function tracingOverhead(): Promise<{ off: number; on: number; pct: number }> {
  const otel = installMemoryTracing();
  const offPair = await tellPair(false);
  const onPair = await tellPair(process.env.AA === undefined);
  try {
    for (let i = 0; i < TRACING_WARMUP_BATCHES; i++) {
      await tellBatch(offPair);
      await tellBatch(onPair);
    }
    const off: number[] = [];
    const on: number[] = [];
    const pct: number[] = [];
    for (let b = 0; b < TRACING_BLOCKS; b++) {
      let cpuOff = 0;
      let cpuOn = 0;
      for (let i = 0; i < TRACING_BLOCK_BATCHES; i++) {
        if ((b * TRACING_BLOCK_BATCHES + i) % 2 === 0) {
          cpuOff += await tellBatch(offPair);
          cpuOn += await tellBatch(onPair);
        } else {
          cpuOn += await tellBatch(onPair);
          cpuOff += await tellBatch(offPair);
        }
      }
      const n = TRACING_BLOCK_BATCHES * TRACING_TELL_BATCH;
      const [o, t] = [(n / cpuOff) * 1e6, (n / cpuOn) * 1e6];
      off.push(o);
      on.push(t);
      pct.push(((o - t) / o) * 100);
    }
    if (otel.exporter.spans.length > 0) throw new Error("spans recorded without an active span");
    return { off: median(off), on: median(on), pct: median(pct) };
  } finally {
    await onPair.stop();
    await offPair.stop();
    otel.uninstall();
  }
}

async function activation(): Promise<number> {
  return withSingle(100, async ({ sharding }) => {
    // warm the coordinator and every shard, so only entity creation is measured
    await Promise.all(
      Array.from({ length: 400 }, (_, i) =>
        sharding
          .entityRefFor(Key, `warm-${i}`)
          .ask((replyTo: ActorRef<number>) => ({ t: "ping", replyTo }), {
            timeoutMs: ASK_TIMEOUT_MS,
          }),
      ),
    );
    const msg: Msg = { t: "n" };
    const base = processed;
    const t0 = performance.now();
    for (let i = 0; i < ACTIVATION_N; i++) sharding.entityRefFor(Key, `a-${i}`).tell(msg);
    await waitProcessed(base + ACTIVATION_N);
    return (ACTIVATION_N / (performance.now() - t0)) * 1000;
  });
}

async function idleBytes(): Promise<number> {
  return withSingle(100, async ({ sharding }) => {
    const msg: Msg = { t: "n" };
    // warm-up: every shard started, the code paths compiled
    let base = processed;
    for (let i = 0; i < 2_000; i++) sharding.entityRefFor(Key, `w-${i}`).tell(msg);
    await waitProcessed(base + 2_000);
    await sleep(50);
    gc();
    const before = process.memoryUsage().heapUsed;
    base = processed;
    for (let i = 0; i < IDLE_N; i++) sharding.entityRefFor(Key, `i-${i}`).tell(msg);
    await waitProcessed(base + IDLE_N);
    await sleep(50);
    await tick();
    gc();
    const after = process.memoryUsage().heapUsed;
    return (after - before) / IDLE_N;
  });
}

async function newShardLatency(): Promise<number[]> {
  return withSingle(NEWSHARD_SHARDS, async ({ sharding }) => {
    const used = new Set<string>();
    let next = 0;
    const freshId = (): string => {
      for (;;) {
        const id = `s-${next++}`;
        const shard = murmur3ShardId(id, NEWSHARD_SHARDS);
        if (!used.has(shard)) {
          used.add(shard);
          return id;
        }
      }
    };
    const samples: number[] = [];
    for (let i = 0; i < NEWSHARD_WARMUP + NEWSHARD_SAMPLES; i++) {
      const ref = sharding.entityRefFor(Key, freshId());
      const t0 = performance.now();
      const receivedAt = await ref.ask((replyTo: ActorRef<number>) => ({ t: "ping", replyTo }), {
        timeoutMs: ASK_TIMEOUT_MS,
      });
      if (i >= NEWSHARD_WARMUP) samples.push((receivedAt - t0) * 1000);
    }
    return samples;
  });
}

// ------------------------------------------------------------------ sequenced entities

/**
 * The entity of the rebalance and failover parts: records every sequenced message in a
 * per-process table (entity -> sender -> sequence numbers in arrival order), which
 * survives the entity being handed off to another process; "where" answers the pid.
 */
type SeqMsg =
  | { readonly t: "seq"; readonly from: string; readonly seq: number }
  | { readonly t: "where"; readonly replyTo: ActorRef<number> };
const SeqKey = EntityTypeKey<SeqMsg>("BenchSeqEntity");
type Received = Record<string, Record<string, number[]>>;
const received: Received = {};
let receivedTotal = 0;

function seqEntity(entityId: string): Behavior<SeqMsg> {
  let mine = received[entityId];
  if (mine === undefined) {
    mine = {};
    received[entityId] = mine;
  }
  const table = mine;
  return Behaviors.receiveMessage<SeqMsg>((m) => {
    if (m.t === "seq") {
      const list = table[m.from];
      if (list === undefined) table[m.from] = [m.seq];
      else list.push(m.seq);
      receivedTotal++;
    } else m.replyTo.tell(process.pid);
  });
}

function initSeq(
  sharding: ClusterSharding,
  rebalanceIntervalMs: number | undefined,
  leasePath?: string,
  leaseProfile: "default" | "fast" = "default",
): void {
  sharding.init({
    ...shardLeases(leasePath, leaseProfile),
    typeKey: SeqKey,
    numberOfShards: 100,
    createBehavior: ({ entityId }) => seqEntity(entityId),
    settings:
      rebalanceIntervalMs === undefined ? undefined : { coordinator: { rebalanceIntervalMs } },
  });
}

/** A steady load: every LOAD_TICK_MS, `perTick` messages round-robin over `entityIds`. */
class SeqLoad {
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly sent: Record<string, number> = {};
  constructor(
    private readonly sharding: ClusterSharding,
    readonly from: string,
  ) {}
  start(entityIds: readonly string[], perTick: number): void {
    const refs = entityIds.map((id) => this.sharding.entityRefFor(SeqKey, id));
    let next = 0;
    this.timer = setInterval(() => {
      for (let i = 0; i < perTick; i++) {
        const k = next++ % refs.length;
        const id = entityIds[k] as string;
        const seq = (this.sent[id] ?? 0) + 1;
        // counted as sent only once tell has accepted it
        (refs[k] as EntityRef<SeqMsg>).tell({ t: "seq", from: this.from, seq });
        this.sent[id] = seq;
      }
    }, LOAD_TICK_MS);
  }
  /** Stops sending; the last sequence number sent to each entity (= messages sent). */
  stop(): Record<string, number> {
    clearInterval(this.timer);
    return { ...this.sent };
  }
}

// ------------------------------------------------------------------ child processes

interface ChildConfig {
  readonly mode: "cluster3" | "seq";
  readonly profile: Profile;
  /** cluster3: the schema of the entity type (default none). */
  readonly schema?: Schema;
  readonly rebalanceIntervalMs?: number;
  /** Shard leases on this SQLite file. */
  readonly leasePath?: string;
}

async function childMain(): Promise<void> {
  const { createInterface } = await import("node:readline");
  const port = Number(process.argv[2]);
  const seedPort = Number(process.argv[3]);
  const config: ChildConfig =
    process.argv[4] === undefined
      ? { mode: "cluster3", profile: "bench" }
      : (JSON.parse(process.argv[4]) as ChildConfig);
  const node = await startNode(port, seedPort, config.profile);
  const sharding = ClusterSharding.get(node);
  if (config.mode === "cluster3")
    sharding.init({
      typeKey: keyOf(config.schema ?? "none"),
      numberOfShards: 100,
      createBehavior: () => sharedBehavior,
    });
  else
    initSeq(
      sharding,
      config.rebalanceIntervalMs,
      config.leasePath,
      config.profile === "fast" ? "fast" : "default",
    );
  const load = new SeqLoad(sharding, `child-${process.pid}`);
  const out = (o: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(o)}\n`);
  createInterface({ input: process.stdin })
    .on("line", (line) => {
      const c = JSON.parse(line) as {
        cmd: string;
        id: number;
        entityIds?: string[];
        perTick?: number;
      };
      const reply = (o: Record<string, unknown>) =>
        out({ event: "reply", id: c.id, ok: true, ...o });
      if (c.cmd === "count") reply({ count: processed });
      else if (c.cmd === "load-start") {
        load.start(c.entityIds ?? [], c.perTick ?? 1);
        reply({ from: load.from });
      } else if (c.cmd === "load-stop") reply({ from: load.from, sent: load.stop() });
      else if (c.cmd === "seq-count") reply({ count: receivedTotal });
      else if (c.cmd === "received") reply({ received });
      else out({ event: "reply", id: c.id, ok: false, error: `unknown command ${c.cmd}` });
    })
    .on("close", () => process.exit(0));
  node.cluster.registerOnMemberUp(() => out({ event: "ready", address: node.address }));
}

function spawnChild(seedPort: number, port: number, name: string, config?: ChildConfig): Child {
  const args = [String(port), String(seedPort)];
  if (config !== undefined) args.push(JSON.stringify(config));
  return spawnNode("bench/sharding.ts", args, { env: { [CHILD_ENV]: "1" }, name });
}

async function waitMembersUp(node: ClusterNode, n: number): Promise<void> {
  await waitUntil(
    () =>
      node.cluster.state.members.filter((m) => m.status === "up").length === n &&
      node.cluster.state.convergence,
    START_TIMEOUT_MS,
    `${n} members up`,
  );
}

/** Polls until the coordinator of `key` has `n` regions registered. */
async function waitRegions(
  sharding: ClusterSharding,
  key: EntityTypeKey<unknown>,
  n: number,
): Promise<void> {
  const end = performance.now() + START_TIMEOUT_MS;
  for (;;) {
    const regions = await sharding.getCurrentRegions(key).catch(() => []);
    if (regions.length >= n) return;
    if (performance.now() > end) throw new Error(`timed out waiting for ${n} regions`);
    await sleep(50);
  }
}

/** `n` entity ids, the i-th in shard i (murmur3 over `n` shards): one entity per shard. */
function onePerShard(n: number): string[] {
  const ids = new Array<string>(n);
  let found = 0;
  for (let k = 0; found < n; k++) {
    const id = `r-${k}`;
    const shard = Number(murmur3ShardId(id, n));
    if (ids[shard] === undefined) {
      ids[shard] = id;
      found++;
    }
  }
  return ids;
}

function whereAll(refs: readonly EntityRef<SeqMsg>[], timeoutMs: number): Promise<number[]> {
  return Promise.all(
    refs.map((r) => r.ask((replyTo: ActorRef<number>) => ({ t: "where", replyTo }), { timeoutMs })),
  );
}

function spreadOf(pids: readonly number[]): string {
  const byPid = new Map<number, number>();
  for (const p of pids) byPid.set(p, (byPid.get(p) ?? 0) + 1);
  return [...byPid.values()].sort((a, b) => b - a).join("/");
}

// ------------------------------------------------------------------ three processes

interface Cluster3Result {
  tell: number[];
  ask: number[];
  spread: string;
}

async function cluster3(schema: Schema = "none"): Promise<Cluster3Result> {
  const key = keyOf(schema);
  const seedPort = await freePort();
  const seed = await startNode(seedPort, seedPort);
  const children: Child[] = [];
  try {
    await waitUntil(() => seed.cluster.selfMember?.status === "up", START_TIMEOUT_MS, "seed up");
    const sharding = ClusterSharding.get(seed);
    sharding.init({ typeKey: key, numberOfShards: 100, createBehavior: () => sharedBehavior });
    for (let k = 0; k < 2; k++) {
      const port = await freePort();
      children.push(
        spawnChild(seedPort, port, `member-${k + 1}`, {
          mode: "cluster3",
          profile: "bench",
          schema,
        }),
      );
    }
    await Promise.all(
      children.map((c) => waitFor(c, (e) => e.event === "ready", START_TIMEOUT_MS, "ready")),
    );
    await waitMembersUp(seed, 3);
    // the children's regions register with the coordinator before shards are allocated
    await waitRegions(sharding, key, 3);
    const refs: EntityRef<Msg>[] = [];
    for (let i = 0; i < C3_ENTITIES; i++) refs.push(sharding.entityRefFor(key, `c-${i}`));
    const opts = { timeoutMs: ASK_TIMEOUT_MS };
    const pids = await Promise.all(
      refs.map((r) => r.ask((replyTo: ActorRef<number>) => ({ t: "where", replyTo }), opts)),
    );
    const spread = spreadOf(pids);

    const total = async (): Promise<number> => {
      const counts = await Promise.all(
        children.map((c) => request(c, { cmd: "count" }, ASK_TIMEOUT_MS)),
      );
      return processed + counts.reduce((s, r) => s + Number(r.count), 0);
    };
    const tellRun = async (): Promise<number> => {
      const base = await total();
      const msg: Msg = { t: "n" };
      const t0 = performance.now();
      let sent = 0;
      let seen = base;
      while (sent < C3_TELL_TOTAL) {
        const n = Math.min(C3_WINDOW / 2, C3_TELL_TOTAL - sent);
        for (let i = 0; i < n; i++) (refs[(sent + i) % C3_ENTITIES] as EntityRef<Msg>).tell(msg);
        sent += n;
        while (base + sent - seen > C3_WINDOW / 2) {
          await sleep(2);
          seen = await total();
        }
      }
      while (seen < base + C3_TELL_TOTAL) {
        await sleep(2);
        seen = await total();
      }
      return (C3_TELL_TOTAL / (performance.now() - t0)) * 1000;
    };
    const tell = await repeat(3, 1, tellRun);

    const ask: number[] = [];
    let seedRandom = 12345;
    const rnd = () => {
      seedRandom = (seedRandom * 1103515245 + 12345) & 0x7fffffff;
      return seedRandom % C3_ENTITIES;
    };
    for (let i = 0; i < C3_ASK_WARMUP + C3_ASK_SAMPLES; i++) {
      const ref = refs[rnd()] as EntityRef<Msg>;
      const t0 = performance.now();
      await ref.ask((replyTo: ActorRef<number>) => ({ t: "ping", replyTo }), opts);
      if (i >= C3_ASK_WARMUP) ask.push((performance.now() - t0) * 1000);
    }
    if (wantsHistogram())
      process.stderr.write(`${latencyHistogram("cluster3 asks, 1 outstanding", ask)}\n`);
    return { tell, ask, spread };
  } finally {
    await Promise.all(children.map((c) => kill(c)));
    await seed.system.terminate();
  }
}

// ------------------------------------------------------------------ rebalance

interface LossReport {
  readonly sent: number;
  readonly received: number;
  readonly lost: number;
  readonly duplicates: number;
  readonly outOfOrder: number;
}

/**
 * Merges what every process received with what every sender sent: a message is
 * received if its (entity, sender, seq) is in some process's table. Out of order: a
 * sequence number below the previous one from the same sender at the same entity, in
 * the same process.
 */
function lossReport(
  sentBy: ReadonlyMap<string, Readonly<Record<string, number>>>,
  tables: readonly Received[],
): LossReport {
  let sent = 0;
  let got = 0;
  let duplicates = 0;
  let outOfOrder = 0;
  for (const [from, perEntity] of sentBy)
    for (const [id, n] of Object.entries(perEntity)) {
      sent += n;
      const seen = new Uint8Array(n + 1);
      for (const t of tables) {
        let prev = 0;
        for (const q of t[id]?.[from] ?? []) {
          if (q < prev) outOfOrder++;
          prev = q;
          if (seen[q] === 1) duplicates++;
          else if (q >= 1 && q <= n) {
            seen[q] = 1;
            got++;
          }
        }
      }
    }
  return { sent, received: got, lost: sent - got, duplicates, outOfOrder };
}

interface RebalanceResult {
  readonly ms: number;
  readonly loss: LossReport;
  readonly before: string;
  readonly after: string;
}

/** Shards per region as "a/b/c" (largest first), and whether least-shard is done with them. */
function balanceOf(
  regions: readonly { readonly shards: Readonly<Record<string, number>> }[],
  expectedRegions: number,
  totalShards: number,
): { spread: string; balanced: boolean } {
  const counts = regions.map((r) => Object.keys(r.shards).length).sort((a, b) => b - a);
  const optimal = Math.ceil(totalShards / expectedRegions);
  const balanced =
    counts.length === expectedRegions &&
    counts.reduce((a, b) => a + b, 0) === totalShards &&
    counts.every((c) => c >= optimal - 1 && c <= optimal);
  return { spread: counts.join("/"), balanced };
}

async function rebalance100(): Promise<RebalanceResult> {
  const seedPort = await freePort();
  const seed = await startNode(seedPort, seedPort);
  const children: Child[] = [];
  const sharding = ClusterSharding.get(seed);
  const load = new SeqLoad(sharding, "seed");
  const config: ChildConfig = {
    mode: "seq",
    profile: "bench",
    rebalanceIntervalMs: REBALANCE_INTERVAL_MS,
  };
  try {
    await waitUntil(() => seed.cluster.selfMember?.status === "up", START_TIMEOUT_MS, "seed up");
    initSeq(sharding, REBALANCE_INTERVAL_MS);
    const a = spawnChild(seedPort, await freePort(), "member-a", config);
    children.push(a);
    await waitFor(a, (e) => e.event === "ready", START_TIMEOUT_MS, "ready");
    await waitMembersUp(seed, 2);
    await waitRegions(sharding, SeqKey, 2);
    // every shard gets its entity (and a home) before the load starts
    const ids = onePerShard(REBALANCE_SHARDS);
    const refs = ids.map((id) => sharding.entityRefFor(SeqKey, id));
    await whereAll(refs, ASK_TIMEOUT_MS);
    const stats0 = await sharding.getClusterShardingStats(SeqKey);
    const before = balanceOf(stats0.regions, 2, REBALANCE_SHARDS).spread;

    load.start(ids, REBALANCE_PER_TICK);
    await request(a, { cmd: "load-start", entityIds: ids, perTick: REBALANCE_PER_TICK }, 5_000);
    await sleep(REBALANCE_LOAD_BEFORE_MS);

    const bPort = await freePort();
    let joinedAt = 0;
    const sub = seed.cluster.subscribe((e) => {
      if (e.type === "member-up" && e.member.uniqueAddress.address.port === bPort && !joinedAt)
        joinedAt = performance.now();
    });
    children.push(spawnChild(seedPort, bPort, "member-b", config));
    await waitUntil(() => joinedAt > 0, START_TIMEOUT_MS, "the third member up");
    sub.dispose();
    let balancedAt = 0;
    let after = "";
    while (balancedAt === 0) {
      const st = await sharding.getClusterShardingStats(SeqKey, { timeoutMs: 2_000 });
      const b = balanceOf(st.regions, 3, REBALANCE_SHARDS);
      after = b.spread;
      if (b.balanced && st.failed.length === 0) balancedAt = performance.now();
      else if (performance.now() - joinedAt > REBALANCE_LIMIT_MS)
        throw new Error(`not balanced ${REBALANCE_LIMIT_MS} ms after the join: ${after}`);
      else await sleep(REBALANCE_POLL_MS);
    }
    await sleep(REBALANCE_LOAD_AFTER_MS);

    const sentBy = new Map<string, Record<string, number>>();
    sentBy.set(load.from, load.stop());
    const stopped = await request(a, { cmd: "load-stop" }, 5_000);
    sentBy.set(String(stopped.from), stopped.sent as Record<string, number>);
    const totalSent = [...sentBy.values()]
      .flatMap((r) => Object.values(r))
      .reduce((x, y) => x + y, 0);
    // wait until everything sent has arrived (or the drain limit: then some was lost)
    const drainEnd = performance.now() + REBALANCE_DRAIN_LIMIT_MS;
    for (;;) {
      const counts = await Promise.all(
        children.map((c) => request(c, { cmd: "seq-count" }, 5_000)),
      );
      const got = receivedTotal + counts.reduce((x, r) => x + Number(r.count), 0);
      if (got >= totalSent || performance.now() > drainEnd) break;
      await sleep(50);
    }
    const tables: Received[] = [received];
    for (const c of children)
      tables.push((await request(c, { cmd: "received" }, 10_000)).received as Received);
    return { ms: balancedAt - joinedAt, loss: lossReport(sentBy, tables), before, after };
  } finally {
    load.stop();
    await Promise.all(children.map((c) => kill(c)));
    await seed.system.terminate();
  }
}

// ------------------------------------------------------------------ failover

interface FailoverResult {
  readonly ms: number;
  readonly spread: string;
  readonly victimEntities: number;
  /** Undefined: not seen before every entity had answered (leases move shards earlier). */
  readonly unreachableMs: number | undefined;
  readonly removedMs: number | undefined;
}

/**
 * Resolves with the time `ref` first answers "where" from a process other than
 * `victimPid`: one ask every FAILOVER_PROBE_INTERVAL_MS (each with its own timeout) until
 * one is answered, or rejects after FAILOVER_LIMIT_MS.
 */
function firstAnswer(ref: EntityRef<SeqMsg>, victimPid: number): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    let done = false;
    const started = performance.now();
    const fire = () => {
      if (done) return;
      if (performance.now() - started > FAILOVER_LIMIT_MS) {
        done = true;
        clearInterval(timer);
        reject(new Error(`${ref.entityId} did not answer within ${FAILOVER_LIMIT_MS} ms`));
        return;
      }
      ref
        .ask((replyTo: ActorRef<number>) => ({ t: "where", replyTo }), {
          timeoutMs: FAILOVER_PROBE_TIMEOUT_MS,
        })
        .then(
          (pid) => {
            if (done || pid === victimPid) return;
            done = true;
            clearInterval(timer);
            resolve(performance.now());
          },
          () => {},
        );
    };
    const timer = setInterval(fire, FAILOVER_PROBE_INTERVAL_MS);
    fire();
  });
}

async function failover(profile: "default" | "fast", leasePath?: string): Promise<FailoverResult> {
  const seedPort = await freePort();
  // the kill is on purpose: its unreachable / downing warnings are not printed
  const seed = await startNode(seedPort, seedPort, profile, "error");
  const children: Child[] = [];
  const config: ChildConfig = {
    mode: "seq",
    profile,
    ...(leasePath === undefined ? {} : { leasePath }),
  };
  try {
    await waitUntil(() => seed.cluster.selfMember?.status === "up", START_TIMEOUT_MS, "seed up");
    const sharding = ClusterSharding.get(seed);
    initSeq(sharding, undefined, leasePath, profile);
    const ports = new Map<Child, number>();
    for (let k = 0; k < 2; k++) {
      const port = await freePort();
      const child = spawnChild(seedPort, port, `member-${k + 1}`, config);
      children.push(child);
      ports.set(child, port);
    }
    await Promise.all(
      children.map((c) => waitFor(c, (e) => e.event === "ready", START_TIMEOUT_MS, "ready")),
    );
    await waitMembersUp(seed, 3);
    await waitRegions(sharding, SeqKey, 3);
    const refs = Array.from({ length: FAILOVER_ENTITIES }, (_, i) =>
      sharding.entityRefFor(SeqKey, `f-${i}`),
    );
    const pids = await whereAll(refs, ASK_TIMEOUT_MS);
    // the victim: the child hosting the most entities (never this process, the oldest
    // member, which runs the coordinator)
    const victim = [...children].sort(
      (x, y) => pids.filter((p) => p === y.pid).length - pids.filter((p) => p === x.pid).length,
    )[0] as Child;
    const victimEntities = pids.filter((p) => p === victim.pid).length;
    // let the failure detectors collect some heartbeat history
    await sleep(FAILOVER_SETTLE_MS);

    let unreachableAt = 0;
    let removedAt = 0;
    const victimPort = ports.get(victim);
    const sub = seed.cluster.subscribe((e) => {
      if (e.type !== "unreachable-member" && e.type !== "member-removed") return;
      if (e.member.uniqueAddress.address.port !== victimPort) return;
      if (e.type === "unreachable-member" && !unreachableAt) unreachableAt = performance.now();
      if (e.type === "member-removed" && !removedAt) removedAt = performance.now();
    });
    const t0 = performance.now();
    const killed = kill(victim);
    const answered = await Promise.all(refs.map((r) => firstAnswer(r, victim.pid)));
    await killed;
    sub.dispose();
    return {
      ms: Math.max(...answered) - t0,
      spread: spreadOf(pids),
      victimEntities,
      unreachableMs: unreachableAt === 0 ? undefined : unreachableAt - t0,
      removedMs: removedAt === 0 ? undefined : removedAt - t0,
    };
  } finally {
    await Promise.all(children.map((c) => kill(c)));
    await seed.system.terminate();
  }
}

export const shardingGroup: BenchGroup = {
  name: "sharding",
  description: "cluster sharding on the real runtime, TCP on 127.0.0.1",
  async run(report) {
    if (wants("sharding.local.tell")) {
      const tell = await repeat(3, 1, () => localTell());
      report({
        metric: "sharding.local.tell.throughput",
        value: median(tell),
        unit: "msg/s",
        note: `1 node, ${TELL_ENTITIES} active entities, ${TELL_TOTAL / 1e6} M msgs`,
      });
    }
    if (wants("sharding.metrics")) {
      const r = await metricsOverhead();
      report({
        metric: "sharding.metrics.overhead.pct",
        value: Number(r.pct.toFixed(2)),
        unit: "%",
        note: `local tell, median over ${METRICS_PAIRS} off/on pairs; medians off ${Math.round(r.off)} vs on ${Math.round(r.on)} msg per CPU second`,
      });
    }
    if (wants("remote.tracing")) {
      const r = await tracingOverhead();
      report({
        metric: "remote.tracing.overhead.pct",
        value: Number(r.pct.toFixed(2)),
        unit: "%",
        note: `remote tell (2 nodes, TCP), tracing enabled without an active span vs off, interleaved batches, median over ${TRACING_BLOCKS} blocks of ${(TRACING_BLOCK_BATCHES * TRACING_TELL_BATCH) / 1000} k msgs per mode; medians off ${Math.round(r.off)} vs on ${Math.round(r.on)} msg per CPU second`,
      });
    }
    if (wants("sharding.activation")) {
      const act = await repeat(3, 1, activation);
      report({
        metric: "sharding.activation.rate",
        value: median(act),
        unit: "entities/s",
        note: `${ACTIVATION_N} new ids, 100 shards already started`,
      });
    }
    if (wants("sharding.idle")) {
      const idle = await repeat(IDLE_RUNS, 0, idleBytes);
      report({
        metric: "sharding.idle.bytes",
        value: median(idle),
        unit: "bytes",
        note: hasGc()
          ? `${IDLE_N} entities, heapUsed delta`
          : "run with --expose-gc for exact figures",
      });
    }
    if (wants("sharding.newshard")) {
      const lat = await newShardLatency();
      report({
        metric: "sharding.newshard.latency.us",
        value: percentile(lat, 50),
        unit: "µs",
        note: `p50 of ${NEWSHARD_SAMPLES}, p99 ${Math.round(percentile(lat, 99))} µs`,
      });
    }
    if (wants("sharding.cluster3")) {
      const c3 = await cluster3();
      report({
        metric: "sharding.cluster3.tell.throughput",
        value: median(c3.tell),
        unit: "msg/s",
        note: `3 processes, ${C3_ENTITIES} entities (${c3.spread}), at the entities`,
      });
      report({
        metric: "sharding.cluster3.ask.p50.us",
        value: percentile(c3.ask, 50),
        unit: "µs",
        note: "1 outstanding, random entity",
      });
      report({
        metric: "sharding.cluster3.ask.p99.us",
        value: percentile(c3.ask, 99),
        unit: "µs",
        note: `${C3_ASK_SAMPLES} samples`,
      });
    }
    if (wants("sharding.schema")) {
      // The cost of a zod schema on the type (docs/evolution.md): local tells are checked at
      // the call site; in cluster3 two thirds of the tells are also checked by the receiving
      // member's region.
      const tell = await repeat(3, 1, () => localTell({ schema: "zod" }));
      report({
        metric: "sharding.schema.local.tell.zod.throughput",
        value: median(tell),
        unit: "msg/s",
        note: "sharding.local.tell with a zod schema on the type",
      });
      const c3 = await cluster3("zod");
      report({
        metric: "sharding.schema.cluster3.tell.zod.throughput",
        value: median(c3.tell),
        unit: "msg/s",
        note: "sharding.cluster3.tell with a zod schema on the type",
      });
    }
    if (wants("sharding.rebalance100")) {
      const rb = await rebalance100();
      report({
        metric: "sharding.rebalance100.ms",
        value: rb.ms,
        unit: `ms (rebalanceIntervalMs ${REBALANCE_INTERVAL_MS})`,
        note: `100 shards ${rb.before} -> ${rb.after}, join (member up) -> balanced`,
      });
      report({
        metric: "sharding.rebalance100.lost",
        value: rb.loss.lost,
        unit: "messages",
        note: `${rb.loss.sent} sent, ${rb.loss.received} received, ${rb.loss.duplicates} duplicates, ${rb.loss.outOfOrder} out of order`,
      });
    }
    if (wants("sharding.lease.overhead")) {
      const off: number[] = [];
      const on: number[] = [];
      // A fresh lease store per run: each run is a new one-member cluster, and the last
      // one's member stopped without releasing its leases (the coordinator's lease would
      // make this one wait out its TTL).
      const leased = async (): Promise<number> => {
        const dir = leaseDir();
        try {
          return await localTell({ leasePath: dir.path });
        } finally {
          await dir.cleanup();
        }
      };
      await localTell(); // warm-up
      for (let i = 0; i < 3; i++) {
        // off then on, and on then off, in turn: warming up favours neither
        if (i % 2 === 0) {
          off.push(await localTell());
          on.push(await leased());
        } else {
          on.push(await leased());
          off.push(await localTell());
        }
      }
      const pct = ((median(off) - median(on)) / median(off)) * 100;
      report({
        metric: "sharding.lease.overhead.pct",
        value: pct,
        unit: "%",
        note: `local tell ${Math.round(median(on))} msg/s with shard leases (SQLite) vs ${Math.round(median(off))} without; medians of 3 alternating runs`,
      });
    }
  },
};

/** When the seed saw the victim unreachable and removed, relative to the fail-over. */
function eventTimes(f: FailoverResult): string {
  const at = (ms: number | undefined) =>
    ms === undefined ? "not before every entity answered" : `after ${Math.round(ms)} ms`;
  return `unreachable ${at(f.unreachableMs)}, removed ${at(f.removedMs)}`;
}

/**
 * Group `failover` (the sharding.failover.* parts of the module comment): separate from
 * `sharding` because the default settings' fail-over alone takes about a minute of real
 * time, and both together ran past a group's 2 minutes.
 */
export const failoverGroup: BenchGroup = {
  name: "failover",
  description: "sharding fail-over after kill -9 of a member: 3 processes, TCP on 127.0.0.1",
  async run(report) {
    for (const profile of ["fast", "default"] as const) {
      if (!wants(`sharding.failover.${profile}`)) continue;
      const f = await failover(profile);
      report({
        metric: `sharding.failover.${profile}.ms`,
        value: f.ms,
        unit: "ms",
        note: `${profile} membership settings, kill -9 -> all ${FAILOVER_ENTITIES} entities answer (${f.spread}, ${f.victimEntities} on the killed node); ${eventTimes(f)}`,
      });
    }
    for (const [name, profile] of [
      ["lease.fast", "fast"],
      ["lease", "default"],
    ] as const) {
      const metric = `sharding.failover.${name}.ms`;
      if (!wants(metric)) continue;
      const dir = leaseDir();
      try {
        const f = await failover(profile, dir.path);
        report({
          metric,
          value: f.ms,
          unit: "ms",
          note: `shard leases on SQLite (ShardLeaseProfiles.${profile}), ${profile} membership settings, kill -9 -> all ${FAILOVER_ENTITIES} entities answer (${f.spread}, ${f.victimEntities} on the killed node); ${eventTimes(f)}`,
        });
      } finally {
        await dir.cleanup();
      }
    }
  },
};

if (process.env[CHILD_ENV] === "1") await childMain();
