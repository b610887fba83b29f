/**
 * Sharding benchmarks on the real runtime, over TCP on 127.0.0.1. Every single-node
 * figure uses a fresh one-member cluster in this process (seed = itself, fast settings).
 *
 * - sharding.local.tell.throughput: 1 000 active entities, tells through EntityRefs
 *   created once; messages counted in the entities, all processed (msgs/s).
 * - sharding.activation.rate: one message each to 50 000 new entity ids; time until all
 *   have been created and have processed it (entities/s).
 * - sharding.idle.bytes: heapUsed delta (after gc) per idle entity, 100 000 entities of a
 *   shared behavior, each started by one message (user state excluded).
 * - sharding.newshard.latency.us: p50 from the first message to a never-used shard until
 *   the entity received it (10 000 shards, 200 sequential asks, one new shard each).
 * - sharding.cluster3.tell.throughput / .ask.p50.us / .ask.p99.us: three processes (this
 *   one is the seed; two children run this file with SHARDKIT_BENCH_SHARDING_CHILD=1).
 *   Tells go from this process to 1 000 entities spread over the three members, counted
 *   in the entities (children report counts over stdin/stdout); asks: 1 outstanding, to
 *   random entities of the 1 000 (about a third of them local).
 */
import { createServer } from "node:net";
import { type ActorRef, Behaviors } from "../src/actor/index.js";
import { ClusterNode, ClusterSharding, type EntityRef, EntityTypeKey } from "../src/api/index.js";
import { murmur3ShardId } from "../src/core/sharding/shard-id.js";
import { createNodeRuntime } from "../src/runtime/node/index.js";
import { type Child, kill, request, spawnNode, waitFor } from "../test/support/child-process.js";
import { type BenchGroup, gc, hasGc, median, percentile, repeat } from "./harness.js";

const CHILD_ENV = "SHARDKIT_BENCH_SHARDING_CHILD";
const SYSTEM = "benchsharding";
const FAST_SETTINGS = {
  periodicTasksInitialDelayMs: 0,
  gossipIntervalMs: 200,
  leaderActionsIntervalMs: 200,
  heartbeatIntervalMs: 200,
  seedNodeTimeoutMs: 500,
};
const TELL_ENTITIES = 1_000;
const TELL_TOTAL = 1_000_000;
const TELL_BATCH = 50_000;
const ACTIVATION_N = 50_000;
const IDLE_N = 100_000;
const NEWSHARD_SHARDS = 10_000;
const NEWSHARD_SAMPLES = 200;
const NEWSHARD_WARMUP = 20;
const C3_ENTITIES = 1_000;
const C3_TELL_TOTAL = 200_000;
const C3_WINDOW = 20_000;
const C3_ASK_SAMPLES = 5_000;
const C3_ASK_WARMUP = 500;
const ASK_TIMEOUT_MS = 30_000;
const START_TIMEOUT_MS = 30_000;

type Msg =
  | { readonly t: "n" }
  | { readonly t: "ping"; readonly replyTo: ActorRef<number> }
  | { readonly t: "where"; readonly replyTo: ActorRef<number> };
const Key = EntityTypeKey<Msg>("BenchEntity");

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

async function startNode(port: number, seedPort: number): Promise<ClusterNode> {
  return ClusterNode.start({
    systemName: SYSTEM,
    host: "127.0.0.1",
    port,
    seedNodes: [`127.0.0.1:${seedPort}`],
    settings: FAST_SETTINGS,
    runtime: createNodeRuntime({ logLevel: "warn" }),
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

async function withSingle<T>(numberOfShards: number, fn: (s: Single) => Promise<T>): Promise<T> {
  const port = await freePort();
  const node = await startNode(port, port);
  try {
    await waitUntil(() => node.cluster.selfMember?.status === "up", START_TIMEOUT_MS, "member up");
    const sharding = ClusterSharding.get(node);
    sharding.init({ typeKey: Key, numberOfShards, createBehavior: () => sharedBehavior });
    return await fn({ node, sharding });
  } finally {
    await node.system.terminate();
  }
}

async function localTell(): Promise<number> {
  return withSingle(100, async ({ sharding }) => {
    const refs: EntityRef<Msg>[] = [];
    for (let i = 0; i < TELL_ENTITIES; i++) refs.push(sharding.entityRefFor(Key, `e-${i}`));
    await Promise.all(
      refs.map((r) =>
        r.ask((replyTo: ActorRef<number>) => ({ t: "ping", replyTo }), {
          timeoutMs: ASK_TIMEOUT_MS,
        }),
      ),
    );
    const msg: Msg = { t: "n" };
    const base = processed;
    const t0 = performance.now();
    for (let sent = 0; sent < TELL_TOTAL; sent += TELL_BATCH) {
      for (let i = 0; i < TELL_BATCH; i++) (refs[i % TELL_ENTITIES] as EntityRef<Msg>).tell(msg);
      await waitProcessed(base + sent + TELL_BATCH);
    }
    return (TELL_TOTAL / (performance.now() - t0)) * 1000;
  });
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

// ------------------------------------------------------------------ three processes

async function childMain(): Promise<void> {
  const { createInterface } = await import("node:readline");
  const port = Number(process.argv[2]);
  const seedPort = Number(process.argv[3]);
  const node = await startNode(port, seedPort);
  ClusterSharding.get(node).init({
    typeKey: Key,
    numberOfShards: 100,
    createBehavior: () => sharedBehavior,
  });
  const out = (o: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(o)}\n`);
  createInterface({ input: process.stdin })
    .on("line", (line) => {
      const c = JSON.parse(line) as { cmd: string; id: number };
      if (c.cmd === "count") out({ event: "reply", id: c.id, ok: true, count: processed });
    })
    .on("close", () => process.exit(0));
  node.cluster.registerOnMemberUp(() => out({ event: "ready", address: node.address }));
}

interface Cluster3Result {
  tell: number[];
  ask: number[];
  spread: string;
}

async function cluster3(): Promise<Cluster3Result> {
  const seedPort = await freePort();
  const seed = await startNode(seedPort, seedPort);
  const children: Child[] = [];
  try {
    await waitUntil(() => seed.cluster.selfMember?.status === "up", START_TIMEOUT_MS, "seed up");
    const sharding = ClusterSharding.get(seed);
    sharding.init({ typeKey: Key, numberOfShards: 100, createBehavior: () => sharedBehavior });
    for (let k = 0; k < 2; k++) {
      const port = await freePort();
      children.push(
        spawnNode("bench/sharding.ts", [String(port), String(seedPort)], {
          env: { [CHILD_ENV]: "1" },
          name: `member-${k + 1}`,
        }),
      );
    }
    await Promise.all(
      children.map((c) => waitFor(c, (e) => e.event === "ready", START_TIMEOUT_MS, "ready")),
    );
    await waitUntil(
      () =>
        seed.cluster.state.members.filter((m) => m.status === "up").length === 3 &&
        seed.cluster.state.convergence,
      START_TIMEOUT_MS,
      "three members up",
    );
    // let the children's regions register with the coordinator before shards are allocated
    await sleep(1_000);
    const refs: EntityRef<Msg>[] = [];
    for (let i = 0; i < C3_ENTITIES; i++) refs.push(sharding.entityRefFor(Key, `c-${i}`));
    const opts = { timeoutMs: ASK_TIMEOUT_MS };
    const pids = await Promise.all(
      refs.map((r) => r.ask((replyTo: ActorRef<number>) => ({ t: "where", replyTo }), opts)),
    );
    const byPid = new Map<number, number>();
    for (const p of pids) byPid.set(p, (byPid.get(p) ?? 0) + 1);
    const spread = [...byPid.values()].sort((a, b) => b - a).join("/");

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
    return { tell, ask, spread };
  } finally {
    await Promise.all(children.map((c) => kill(c)));
    await seed.system.terminate();
  }
}

export const shardingGroup: BenchGroup = {
  name: "sharding",
  description: "cluster sharding on the real runtime, TCP on 127.0.0.1",
  async run(report) {
    const tell = await repeat(3, 1, localTell);
    report({
      metric: "sharding.local.tell.throughput",
      value: median(tell),
      unit: "msg/s",
      note: `1 node, ${TELL_ENTITIES} active entities, ${TELL_TOTAL / 1e6} M msgs`,
    });
    const act = await repeat(3, 1, activation);
    report({
      metric: "sharding.activation.rate",
      value: median(act),
      unit: "entities/s",
      note: `${ACTIVATION_N} new ids, 100 shards already started`,
    });
    const idle = await repeat(3, 0, idleBytes);
    report({
      metric: "sharding.idle.bytes",
      value: median(idle),
      unit: "bytes",
      note: hasGc()
        ? `${IDLE_N} entities, heapUsed delta`
        : "run with --expose-gc for exact figures",
    });
    const lat = await newShardLatency();
    report({
      metric: "sharding.newshard.latency.us",
      value: percentile(lat, 50),
      unit: "µs",
      note: `p50 of ${NEWSHARD_SAMPLES}, p99 ${Math.round(percentile(lat, 99))} µs`,
    });
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
  },
};

if (process.env[CHILD_ENV] === "1") await childMain();
