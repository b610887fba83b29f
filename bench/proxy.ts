/**
 * The request path through a proxy (issue 15, items 1 and 2, measurement only), over TCP
 * on 127.0.0.1 with three child processes (this process only orchestrates):
 *
 * - member-1 (the seed) and member-2 join with role "counter" and host Counter entities
 *   (10 000 entity ids, 100 shards; the coordinator runs on the oldest "counter" member);
 * - the proxy joins without the role, so `init` starts a proxy-only region there: every
 *   ask travels proxy -> member region -> shard -> entity, and the reply back.
 *
 * The proxy runs `concurrency` loops, each sending `Increment` asks (the entity replies
 * with its new count) to uniformly random entities of the 10 000, one outstanding per
 * loop. Every entity is asked once first (activation); after a warm-up it measures for a fixed time:
 *
 * - sharding.proxy.ask.c64.throughput / .c64.p50.us / .c64.p99.us: 64 loops;
 * - sharding.proxy.ask.c1.throughput / .c1.p50.us: 1 loop (the same cluster, after c64);
 *   `.c1.cpu.proxy.us` / `.c1.cpu.members.us`: its CPU per ask (the rest of its latency is
 *   waiting: wake-ups and the socket, compare remote.floor.roundtrip.p50.us);
 * - sharding.proxy.ask.persisted.c64.throughput / .persisted.c64.p99.us: 64 loops, the
 *   Counter event-sourced (one event per Increment, persisted before the reply) on SQLite,
 *   one file shared by both members (a fresh cluster and file), `synchronous: "normal"`
 *   (an acknowledged event survives kill -9 of a member; see docs/persistence.md,
 *   "Throughput and durability");
 * - sharding.proxy.ask.persisted.memory.c64.throughput / .memory.c64.p99.us: the same
 *   event-sourced Counter on an in-memory journal per member (no store): what event
 *   sourcing itself costs, apart from the store's work. Only on request
 *   (`--only=sharding.proxy.ask.persisted.memory`): the whole group is near its 2 minutes;
 * - sharding.proxy.ask.persisted.full.c64.throughput / .full.c64.p99.us: the same with
 *   the default `synchronous: "full"` (an acknowledged event also survives power loss);
 * - sharding.proxy.ask.persisted.pg.c64.throughput / .pg.c64.p99.us: the same on
 *   PostgreSQL when SHARDKIT_PG_URL is set (else a SKIP line): both members share the
 *   database, on tables with a prefix unique to the run, dropped at the end.
 *
 * The persisted notes give the journals' events per group-commit batch (both members).
 *
 * Latency is from the call of `ask` to its promise settling, per ask; percentiles are
 * nearest-rank over every ask of the measured window.
 *
 * SHARDKIT_BENCH_PROXY_CPU_PROF=<dir>: writes a CPU profile of the proxy and of member-1
 * covering exactly the measured c64 window (volatile) as <dir>/proxy-c64.cpuprofile and
 * <dir>/member-c64.cpuprofile (node:inspector's Profiler, the same format as --cpu-prof;
 * summarize with `node --import tsx bench/profile-top.ts <file>`), and of member-1 in
 * each persisted window as <dir>/member-persisted[-full|-pg]-c64.cpuprofile.
 *
 * SHARDKIT_BENCH_PROXY_NODE_FLAGS="<flags>": node flags for the three child processes, e.g.
 * `--no-turbo-inlining` with the heap profile, so that bytes are charged to the function
 * that allocates them and not to the caller it was inlined into.
 * SHARDKIT_BENCH_PROXY_HEAP_PROF=<dir>: writes an allocation profile of the proxy over the
 * measured c64 window (V8's sampling heap profiler, garbage included) as
 * <dir>/proxy-c64.heapprofile; `node --import tsx bench/profile-top.ts <file>` lists the
 * functions that allocate the most.
 *
 * Cost per ask (c64 windows, volatile and persisted): `.cpu.proxy.us` and
 * `.cpu.members.us` are the CPU time (user + system) the proxy and both members spent per
 * ask (the members' includes their SQLite calls, not the PostgreSQL server's work), with
 * the socket writes, bytes, context switches (waits for I/O and preemptions, from
 * process.resourceUsage) and GC pauses per ask in the notes: unlike rates, they hold
 * better on a busy machine.
 * `.pg.c64.cpu.server.us` is the local PostgreSQL server's CPU per ask (its processes'
 * time from /proc; absent when the server is not on this machine), and `.cpu.ceiling`
 * the rate at which these processes would keep every core of the machine busy (cores
 * divided by the CPU per ask of proxy, members and server): a workload's rate cannot
 * pass its ceiling on this machine, whatever the code waits for.
 *
 * Its own group (`npm run bench -- proxy`, about 75 s with PostgreSQL): the sharding
 * group is already near its 2-minute budget. Every child is killed at the end, also on
 * error.
 */

import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { PerformanceObserver, constants as perfConstants } from "node:perf_hooks";
import pg from "pg";
import {
  type ActorRef,
  type Behavior,
  Behaviors,
  Effect,
  type EventCodec,
  EventSourcedBehavior,
  persistenceIdOf,
} from "../src/actor/index.js";
import { ClusterNode, ClusterSharding, type EntityRef, EntityTypeKey } from "../src/api/index.js";
import type { GroupCommitStats } from "../src/persistence/group-committer.js";
import { MemoryJournal } from "../src/persistence/memory/memory-journal.js";
import { postgresPersistence } from "../src/persistence/postgres/postgres-persistence.js";
import { migratePostgres, postgresTables } from "../src/persistence/postgres/postgres-schema.js";
import { sqlitePersistence } from "../src/persistence/sqlite/sqlite-persistence.js";
import type { SqliteSettings } from "../src/persistence/sqlite/sqlite-settings.js";
import type { Journal } from "../src/ports/journal.js";
import { createNodeRuntime } from "../src/runtime/node/index.js";
import { type Child, kill, request, spawnNode, waitFor } from "../test/support/child-process.js";
import {
  type BenchGroup,
  latencyHistogram,
  type Metric,
  percentile,
  wants,
  wantsHistogram,
  wantsOnRequest,
} from "./harness.js";

const CHILD_ENV = "SHARDKIT_BENCH_PROXY_CHILD";
const PROF_ENV = "SHARDKIT_BENCH_PROXY_CPU_PROF";
const HEAP_PROF_ENV = "SHARDKIT_BENCH_PROXY_HEAP_PROF";
/** V8/node flags for the proxy and member processes, space-separated (profiling). */
const NODE_FLAGS_ENV = "SHARDKIT_BENCH_PROXY_NODE_FLAGS";
/** Bytes between two allocation samples of the heap profile (V8's default is 32 KiB). */
const HEAP_SAMPLING_INTERVAL_BYTES = 4_096;
const SYSTEM = "benchproxy";
const ROLE = "counter";
const ENTITIES = 10_000;
const SHARDS = 100;
/** Asks in flight at once (one per loop) for the c64 figures. */
const HIGH_CONCURRENCY = 64;
/** Warm-up before each c64 window (the 10 000 entities are active already). */
const WARMUP_MS = 3_000;
/** Warm-up before the c1 window (entities are already active). */
const C1_WARMUP_MS = 1_000;
/** Each measured window. */
const MEASURE_MS = 6_000;
const ASK_TIMEOUT_MS = 30_000;
const START_TIMEOUT_MS = 30_000;
/** How long the orchestrator waits for a run's reply beyond its own duration. */
const RUN_REPLY_SLACK_MS = 30_000;
const CMD_TIMEOUT_MS = 10_000;
/** Asking each of the ENTITIES once (activation, persisted: one event each). */
const ACTIVATE_TIMEOUT_MS = 60_000;
const POLL_MS = 50;
/** Pool size of each member on PostgreSQL (the journal's batchesInFlightMax is 4). */
const PG_POOL_MAX = 8;
/** Cluster settings that only make it form faster (failure detection stays default). */
const FAST_SETTINGS = {
  periodicTasksInitialDelayMs: 0,
  gossipIntervalMs: 200,
  leaderActionsIntervalMs: 200,
  heartbeatIntervalMs: 200,
  seedNodeTimeoutMs: 500,
};

type CounterMsg = { readonly t: "inc"; readonly replyTo: ActorRef<number> };
const CounterKey = EntityTypeKey<CounterMsg>("Counter");

function volatileCounter(): Behavior<CounterMsg> {
  let count = 0;
  return Behaviors.receiveMessage<CounterMsg>((m) => {
    count++;
    m.replyTo.tell(count);
  });
}

type Incremented = { readonly d: number };
const Eff = Effect.of<Incremented, number>();
const enc = new TextEncoder();
const dec = new TextDecoder();
const eventCodec: EventCodec<Incremented> = {
  encode: (v) => ({ serializerId: 101, bytes: enc.encode(JSON.stringify(v)) }),
  decode: (_id, bytes) => JSON.parse(dec.decode(bytes)) as Incremented,
};

function persistedCounter(journal: Journal, entityId: string): Behavior<CounterMsg> {
  return EventSourcedBehavior.create<CounterMsg, Incremented, number>({
    persistenceId: persistenceIdOf("Counter", entityId),
    emptyState: 0,
    commandHandler: (_s, m) => Eff.persist({ d: 1 }).thenReply(m.replyTo, (s) => s),
    eventHandler: (s, e) => s + e.d,
    journal,
    eventCodec,
  });
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

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

// ------------------------------------------------------------------ child processes

/** Where the members' event-sourced Counters persist. */
type Store =
  | {
      readonly kind: "sqlite";
      readonly path: string;
      readonly synchronous: SqliteSettings["synchronous"];
    }
  | { readonly kind: "pg"; readonly url: string; readonly tablePrefix: string }
  /** Each member its own in-memory journal: event sourcing without a store. */
  | { readonly kind: "memory" };

interface ChildConfig {
  readonly kind: "member" | "proxy";
  readonly port: number;
  readonly seedPort: number;
  /** Members: event-sourced Counters on this store; absent: volatile. */
  readonly store?: Store;
}

/** A member's persistence: the journal and what the bench reads from it. */
interface MemberStore {
  readonly journal: Journal;
  stats(): GroupCommitStats;
}

function openStore(store: Store): MemberStore {
  if (store.kind === "memory") {
    const journal = new MemoryJournal();
    const none: GroupCommitStats = {
      batches: 0,
      appends: 0,
      events: 0,
      batchEventsPeak: 0,
      joinedAppends: 0,
    };
    return { journal, stats: () => none };
  }
  if (store.kind === "sqlite") {
    const p = sqlitePersistence({ path: store.path, synchronous: store.synchronous });
    return { journal: p.journal, stats: () => p.journal.stats() };
  }
  const pool = new pg.Pool({ connectionString: store.url, max: PG_POOL_MAX });
  const p = postgresPersistence({ pool, tablePrefix: store.tablePrefix, createSchema: false });
  return { journal: p.journal, stats: () => p.journal.stats() };
}

interface RunResult {
  readonly asks: number;
  readonly seconds: number;
  readonly p50us: number;
  readonly p99us: number;
  /** With SHARDKIT_BENCH_HISTOGRAM=1: the latency histogram of the window, as text. */
  readonly histogram?: string;
}

/** Asks every entity once, `concurrency` asks in flight; returns how many answered. */
async function activateAll(
  refs: readonly EntityRef<CounterMsg>[],
  concurrency: number,
): Promise<number> {
  let next = 0;
  const opts = { timeoutMs: ASK_TIMEOUT_MS };
  const make = (replyTo: ActorRef<number>): CounterMsg => ({ t: "inc", replyTo });
  const loop = async (): Promise<void> => {
    while (next < refs.length) {
      const ref = refs[next++] as EntityRef<CounterMsg>;
      await ref.ask(make, opts);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  return refs.length;
}

/** `concurrency` ask loops to random entities; measures only after `warmupMs`. */
async function runAsks(
  refs: readonly EntityRef<CounterMsg>[],
  concurrency: number,
  warmupMs: number,
  measureMs: number,
  windowEnded: () => Promise<void> = async () => {},
): Promise<RunResult> {
  const t0 = performance.now();
  const measureFrom = t0 + warmupMs;
  const end = measureFrom + measureMs;
  const lat: number[] = [];
  let asks = 0;
  let lastDone = measureFrom;
  const opts = { timeoutMs: ASK_TIMEOUT_MS };
  const make = (replyTo: ActorRef<number>): CounterMsg => ({ t: "inc", replyTo });
  const loop = async (): Promise<void> => {
    for (;;) {
      const start = performance.now();
      if (start >= end) return;
      const ref = refs[Math.floor(Math.random() * refs.length)] as EntityRef<CounterMsg>;
      await ref.ask(make, opts);
      const done = performance.now();
      if (start >= measureFrom) {
        lat.push(done - start);
        asks++;
        if (done > lastDone) lastDone = done;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  await windowEnded();
  const seconds = (lastDone - measureFrom) / 1000;
  return {
    asks,
    seconds,
    p50us: percentile(lat, 50) * 1000,
    p99us: percentile(lat, 99) * 1000,
    ...(wantsHistogram() && lat.length > 0
      ? {
          histogram: latencyHistogram(
            `proxy asks, concurrency ${concurrency}`,
            lat.map((ms) => ms * 1000),
          ),
        }
      : {}),
  };
}

async function childMain(): Promise<void> {
  const { createInterface } = await import("node:readline");
  const { Session } = await import("node:inspector/promises");
  const config = JSON.parse(process.argv[2] ?? "{}") as ChildConfig;
  const member = config.kind === "member";
  const node = await ClusterNode.start({
    systemName: SYSTEM,
    host: "127.0.0.1",
    port: config.port,
    seedNodes: [`127.0.0.1:${config.seedPort}`],
    roles: member ? [ROLE] : [],
    settings: FAST_SETTINGS,
    runtime: createNodeRuntime({ logLevel: "warn" }),
    handleSignals: false,
  });
  const db = member && config.store !== undefined ? openStore(config.store) : undefined;
  const sharding = ClusterSharding.get(node);
  sharding.init({
    typeKey: CounterKey,
    numberOfShards: SHARDS,
    role: ROLE,
    createBehavior: ({ entityId }) =>
      db === undefined ? volatileCounter() : persistedCounter(db.journal, entityId),
  });
  const refs: EntityRef<CounterMsg>[] = [];
  for (let i = 0; i < ENTITIES; i++) refs.push(sharding.entityRefFor(CounterKey, `counter-${i}`));
  // every collection; the full (mark-compact) ones also apart: they set the tail
  const gc = { ms: 0, count: 0, majorMs: 0, majorCount: 0 };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      gc.ms += e.duration;
      gc.count++;
      if (
        (e as { detail?: { kind?: number } }).detail?.kind ===
        perfConstants.NODE_PERFORMANCE_GC_MAJOR
      ) {
        gc.majorMs += e.duration;
        gc.majorCount++;
      }
    }
  }).observe({ entryTypes: ["gc"] });
  let session: InstanceType<typeof Session> | undefined;
  const out = (o: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(o)}\n`);
  const profStop = async (path: string): Promise<void> => {
    if (session === undefined) throw new Error("profiler not started");
    const { profile } = await session.post("Profiler.stop");
    writeFileSync(path, JSON.stringify(profile));
    session.disconnect();
    session = undefined;
  };
  let heapSession: InstanceType<typeof Session> | undefined;
  const heapStop = async (path: string): Promise<void> => {
    if (heapSession === undefined) throw new Error("heap profiler not started");
    const { profile } = await heapSession.post("HeapProfiler.stopSampling");
    writeFileSync(path, JSON.stringify(profile));
    heapSession.disconnect();
    heapSession = undefined;
  };
  const handle = async (c: Record<string, unknown>): Promise<Record<string, unknown>> => {
    switch (c.cmd) {
      case "journal-stats":
        return { ...(db?.stats() ?? {}) };
      case "regions":
        return { n: (await sharding.getCurrentRegions(CounterKey).catch(() => [])).length };
      case "activate":
        return { activated: await activateAll(refs, Number(c.concurrency)) };
      case "run":
        return {
          ...(await runAsks(
            refs,
            Number(c.concurrency),
            Number(c.warmupMs),
            Number(c.measureMs),
            // the proxy's profiles stop with the window, before the percentiles
            async () => {
              if (typeof c.profPath === "string") await profStop(c.profPath);
              if (typeof c.heapPath === "string") await heapStop(c.heapPath);
            },
          )),
        };
      case "usage": {
        const cpu = process.cpuUsage();
        const ru = process.resourceUsage();
        const st = node.remoting.stats;
        return {
          cpuUs: cpu.user + cpu.system,
          sysUs: cpu.system, // the kernel's part: socket writes, file I/O
          writes: st.writes,
          userOut: st.userMessagesOut,
          userIn: st.userMessagesIn,
          bytesOut: st.userBytesOut + st.systemBytesOut + st.controlBytesOut,
          gcMs: gc.ms,
          gcCount: gc.count,
          gcMajorMs: gc.majorMs,
          gcMajorCount: gc.majorCount,
          switches: ru.voluntaryContextSwitches,
          preempted: ru.involuntaryContextSwitches,
        };
      }
      case "heap-start":
        heapSession = new Session();
        heapSession.connect();
        await heapSession.post("HeapProfiler.enable");
        await heapSession.post("HeapProfiler.startSampling", {
          samplingInterval: HEAP_SAMPLING_INTERVAL_BYTES,
          // garbage too: what the young generation has to collect
          includeObjectsCollectedByMinorGC: true,
          includeObjectsCollectedByMajorGC: true,
        } as never);
        return {};
      case "prof-start":
        session = new Session();
        session.connect();
        await session.post("Profiler.enable");
        await session.post("Profiler.start");
        return {};
      case "prof-stop":
        await profStop(String(c.path));
        return {};
      default:
        throw new Error(`unknown command ${String(c.cmd)}`);
    }
  };
  createInterface({ input: process.stdin })
    .on("line", (line) => {
      const c = JSON.parse(line) as Record<string, unknown>;
      handle(c).then(
        (r) => out({ event: "reply", id: c.id, ok: true, ...r }),
        (e: unknown) => out({ event: "reply", id: c.id, ok: false, error: String(e) }),
      );
    })
    .on("close", () => process.exit(0));
  node.cluster.registerOnMemberUp(() => out({ event: "ready", address: node.address }));
}

function spawnChild(config: ChildConfig, name: string): Child {
  const flags = process.env[NODE_FLAGS_ENV]?.split(/\s+/).filter((f) => f.length > 0) ?? [];
  return spawnNode("bench/proxy.ts", [JSON.stringify(config)], {
    env: { [CHILD_ENV]: "1" },
    name,
    execArgv: flags,
  });
}

// ------------------------------------------------------------------ orchestration

interface Cluster {
  readonly proxy: Child;
  readonly members: readonly Child[];
}

/** Starts 2 members and the proxy, runs `body`, and kills all three whatever happens. */
async function withCluster<T>(
  store: Store | undefined,
  body: (c: Cluster) => Promise<T>,
): Promise<T> {
  const children: Child[] = [];
  try {
    const seedPort = await freePort();
    const m1 = spawnChild({ kind: "member", port: seedPort, seedPort, store }, "member-1");
    children.push(m1);
    await waitFor(m1, (e) => e.event === "ready", START_TIMEOUT_MS, "member-1 ready");
    const m2 = spawnChild({ kind: "member", port: await freePort(), seedPort, store }, "member-2");
    children.push(m2);
    const proxy = spawnChild({ kind: "proxy", port: await freePort(), seedPort }, "proxy");
    children.push(proxy);
    await Promise.all(
      [m2, proxy].map((c) => waitFor(c, (e) => e.event === "ready", START_TIMEOUT_MS, "ready")),
    );
    // both members' regions are registered with the coordinator before the first ask
    const end = performance.now() + START_TIMEOUT_MS;
    for (;;) {
      const r = await request(proxy, { cmd: "regions" }, CMD_TIMEOUT_MS);
      if (Number(r.n) >= 2) break;
      if (performance.now() > end) throw new Error("timed out waiting for 2 regions");
      await sleep(POLL_MS);
    }
    // every entity active before any warm-up: a random warm-up on a slow machine leaves
    // some never asked, and their activation would fall into a measured window
    await request(proxy, { cmd: "activate", concurrency: HIGH_CONCURRENCY }, ACTIVATE_TIMEOUT_MS);
    return await body({ proxy, members: [m1, m2] });
  } finally {
    await Promise.all(children.map((c) => kill(c)));
  }
}

async function run(
  proxy: Child,
  concurrency: number,
  warmupMs: number,
  measureMs: number,
  profPath?: string,
  heapPath?: string,
): Promise<RunResult> {
  const r = await request(
    proxy,
    { cmd: "run", concurrency, warmupMs, measureMs, profPath, heapPath },
    warmupMs + measureMs + RUN_REPLY_SLACK_MS,
  );
  const result = r as unknown as RunResult;
  if (result.histogram !== undefined) process.stderr.write(`${result.histogram}\n`);
  return result;
}

interface Usage {
  readonly cpuUs: number;
  readonly sysUs: number;
  readonly writes: number;
  readonly userOut: number;
  readonly userIn: number;
  readonly bytesOut: number;
  readonly gcMs: number;
  readonly gcCount: number;
  readonly gcMajorMs: number;
  readonly gcMajorCount: number;
  /** Context switches (process.resourceUsage): waits for I/O, and preemptions. */
  readonly switches: number;
  readonly preempted: number;
}

const usageOf = async (c: Child): Promise<Usage> =>
  (await request(c, { cmd: "usage" }, CMD_TIMEOUT_MS)) as unknown as Usage;

/** "<v> waits and <i> preemptions per ask" (context switches) of the processes `of`. */
function switchNote(
  d: (i: number, k: keyof Usage) => number,
  of: readonly number[],
  asks: number,
): string {
  const sum = (k: keyof Usage) => of.reduce((acc, i) => acc + d(i, k), 0);
  return `${(sum("switches") / asks).toFixed(3)} waits and ${(sum("preempted") / asks).toFixed(3)} preemptions per ask`;
}

/** "GC <n> pauses (<m> full), <ms> ms (<ms> in full ones)" of the processes `of`. */
function gcNote(d: (i: number, k: keyof Usage) => number, of: readonly number[]): string {
  const sum = (k: keyof Usage) => of.reduce((acc, i) => acc + d(i, k), 0);
  return `GC ${sum("gcCount")} pauses (${sum("gcMajorCount")} full), ${sum("gcMs").toFixed(0)} ms (${sum("gcMajorMs").toFixed(0)} in full ones)`;
}

/**
 * What one ask cost each process over a measured window (CPU time, socket writes, GC):
 * figures that hold on a busy machine, unlike wall-clock rates (docs/performance.md).
 */
function reportCost(
  prefix: string,
  asks: number,
  before: readonly Usage[],
  after: readonly Usage[],
  report: (m: Metric) => void,
  serverUs?: number,
  ceiling = true,
): void {
  const d = (i: number, k: keyof Usage) => (after[i] as Usage)[k] - (before[i] as Usage)[k];
  // index 0: the proxy; 1 and 2: the members
  report({
    metric: `${prefix}.cpu.proxy.us`,
    value: d(0, "cpuUs") / asks,
    unit: "µs/ask",
    note: `proxy CPU per ask (${(d(0, "sysUs") / asks).toFixed(1)} in the kernel); ${(d(0, "writes") / asks).toFixed(3)} socket writes and ${(d(0, "bytesOut") / asks).toFixed(0)} bytes out per ask; ${switchNote(d, [0], asks)}; ${gcNote(d, [0])}`,
  });
  report({
    metric: `${prefix}.cpu.members.us`,
    value: (d(1, "cpuUs") + d(2, "cpuUs")) / asks,
    unit: "µs/ask",
    note: `both members' CPU per ask (${((d(1, "sysUs") + d(2, "sysUs")) / asks).toFixed(1)} in the kernel); ${((d(1, "writes") + d(2, "writes")) / asks).toFixed(3)} socket writes per ask; ${switchNote(d, [1, 2], asks)}; ${gcNote(d, [1, 2])}`,
  });
  // Every process of the workload on this machine's cores: the rate they could reach
  // with every core busy, at this CPU per ask (the orchestrator's own time left out).
  const allUs = (d(0, "cpuUs") + d(1, "cpuUs") + d(2, "cpuUs")) / asks + (serverUs ?? 0);
  if (serverUs !== undefined)
    report({
      metric: `${prefix}.cpu.server.us`,
      value: serverUs,
      unit: "µs/ask",
      note: "the local PostgreSQL server's CPU per ask (its processes, from /proc)",
    });
  if (!ceiling) return;
  report({
    metric: `${prefix}.cpu.ceiling`,
    value: (availableParallelism() * 1_000_000) / allUs,
    unit: "asks/s",
    note: `${availableParallelism()} cores / ${allUs.toFixed(1)} µs of CPU per ask (proxy + members${serverUs === undefined ? "" : " + server"}): the rate at which every core would be busy`,
  });
}

const throughputOf = (r: RunResult) => r.asks / r.seconds;

/** Both members' group-commit counters added up. */
async function journalStats(members: readonly Child[]): Promise<GroupCommitStats> {
  const all = await Promise.all(
    members.map((m) => request(m, { cmd: "journal-stats" }, CMD_TIMEOUT_MS)),
  );
  const sum = (k: keyof GroupCommitStats) => all.reduce((a, r) => a + Number(r[k] ?? 0), 0);
  return {
    batches: sum("batches"),
    appends: sum("appends"),
    events: sum("events"),
    batchEventsPeak: Math.max(...all.map((r) => Number(r.batchEventsPeak ?? 0))),
    joinedAppends: sum("joinedAppends"),
  };
}

/**
 * One persisted c64 figure on a fresh cluster over `store` (every entity already asked
 * once): a warm-up run, then the measured window (profiled on member-1 with `profPath`).
 */
async function persistedRun(
  report: Parameters<BenchGroup["run"]>[0],
  prefix: string,
  store: Store,
  what: string,
  profPath: string | undefined,
): Promise<void> {
  await withCluster(store, async ({ proxy, members }) => {
    await run(proxy, HIGH_CONCURRENCY, WARMUP_MS, 0);
    const profiled = members[0] as Child;
    if (profPath !== undefined) await request(profiled, { cmd: "prof-start" }, CMD_TIMEOUT_MS);
    const all = [proxy, ...members];
    const before = await journalStats(members);
    const usageBefore = await Promise.all(all.map(usageOf));
    const serverBefore = store.kind === "pg" ? localPostgresCpuUs() : undefined;
    const r = await run(proxy, HIGH_CONCURRENCY, 0, MEASURE_MS);
    const serverAfter = store.kind === "pg" ? localPostgresCpuUs() : undefined;
    const usageAfter = await Promise.all(all.map(usageOf));
    const after = await journalStats(members);
    if (profPath !== undefined)
      await request(profiled, { cmd: "prof-stop", path: profPath }, CMD_TIMEOUT_MS);
    const batches = after.batches - before.batches;
    const perBatch = batches === 0 ? 0 : (after.events - before.events) / batches;
    const appends = after.appends - before.appends;
    const joined =
      appends === 0 ? 0 : (100 * (after.joinedAppends - before.joinedAppends)) / appends;
    report({
      metric: `${prefix}.throughput`,
      value: throughputOf(r),
      unit: "asks/s",
      note: noteOf(
        r,
        batches === 0
          ? `${HIGH_CONCURRENCY} in flight, event-sourced on ${what}`
          : `${HIGH_CONCURRENCY} in flight, event-sourced on ${what}, ${perBatch.toFixed(1)} events/batch (${joined.toFixed(0)} % of appends joined a batch waiting for the lock)`,
        WARMUP_MS,
      ),
    });
    report({ metric: `${prefix}.p99.us`, value: r.p99us, unit: "µs" });
    const serverUs =
      serverBefore === undefined || serverAfter === undefined
        ? undefined
        : (serverAfter - serverBefore) / r.asks;
    reportCost(prefix, r.asks, usageBefore, usageAfter, report, serverUs);
  });
}

/**
 * CPU time (user + system, µs) used so far by the processes named `postgres` on this
 * machine (the server and its backends, read from /proc), or undefined when /proc cannot
 * be read (not Linux) or the server runs elsewhere. Backends that exit during a window
 * take their time with them, so a window's difference can only be an underestimate; the
 * bench's connections stay open for the whole window.
 */
function localPostgresCpuUs(): number | undefined {
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((d) => /^\d+$/.test(d));
  } catch {
    return undefined;
  }
  const ticksPerSecond = 100; // USER_HZ, 100 on every Linux build in use
  let ticks = 0;
  let found = false;
  for (const pid of pids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
      continue; // exited meanwhile
    }
    const close = stat.lastIndexOf(")");
    if (stat.slice(stat.indexOf("(") + 1, close) !== "postgres") continue;
    const fields = stat.slice(close + 2).split(" ");
    // fields[0] is field 3 (state); utime and stime are fields 14 and 15
    ticks += Number(fields[11]) + Number(fields[12]);
    found = true;
  }
  return found ? (ticks * 1_000_000) / ticksPerSecond : undefined;
}
const noteOf = (r: RunResult, extra: string, warmupMs: number) =>
  `${extra}; ${r.asks} asks in ${r.seconds.toFixed(1)} s after ${warmupMs / 1000} s warm-up, p50 ${Math.round(r.p50us)} µs, p99 ${Math.round(r.p99us)} µs`;

export const proxyGroup: BenchGroup = {
  name: "proxy",
  description: `2 member processes (Counter entities) + 1 proxy-only process asking, ${ENTITIES} entities, TCP on 127.0.0.1`,
  async run(report) {
    const profDir = process.env[PROF_ENV];
    const heapDir = process.env[HEAP_PROF_ENV];
    if (wants("sharding.proxy.ask.c64") || wants("sharding.proxy.ask.c1"))
      await withCluster(undefined, async ({ proxy, members }) => {
        if (wants("sharding.proxy.ask.c64")) {
          // warm-up run outside the profiled window
          await run(proxy, HIGH_CONCURRENCY, WARMUP_MS, 0);
          const profiled = profDir === undefined ? [] : [proxy, members[0] as Child];
          await Promise.all(profiled.map((c) => request(c, { cmd: "prof-start" }, CMD_TIMEOUT_MS)));
          if (heapDir !== undefined) await request(proxy, { cmd: "heap-start" }, CMD_TIMEOUT_MS);
          const all = [proxy, ...members];
          const before = await Promise.all(all.map(usageOf));
          const r = await run(
            proxy,
            HIGH_CONCURRENCY,
            0,
            MEASURE_MS,
            profDir === undefined ? undefined : join(profDir, "proxy-c64.cpuprofile"),
            heapDir === undefined ? undefined : join(heapDir, "proxy-c64.heapprofile"),
          );
          const after = await Promise.all(all.map(usageOf));
          if (profDir !== undefined)
            await request(
              members[0] as Child,
              { cmd: "prof-stop", path: join(profDir, "member-c64.cpuprofile") },
              CMD_TIMEOUT_MS,
            );
          const note = noteOf(r, `${HIGH_CONCURRENCY} asks in flight`, WARMUP_MS);
          report({
            metric: "sharding.proxy.ask.c64.throughput",
            value: throughputOf(r),
            unit: "asks/s",
            note,
          });
          report({ metric: "sharding.proxy.ask.c64.p50.us", value: r.p50us, unit: "µs" });
          report({ metric: "sharding.proxy.ask.c64.p99.us", value: r.p99us, unit: "µs" });
          reportCost("sharding.proxy.ask.c64", r.asks, before, after, report);
        }
        if (wants("sharding.proxy.ask.c1")) {
          // without the c64 part first, the entities are activated here
          const warm = wants("sharding.proxy.ask.c64") ? C1_WARMUP_MS : WARMUP_MS;
          await run(proxy, 1, warm, 0);
          const all = [proxy, ...members];
          const before = await Promise.all(all.map(usageOf));
          const r = await run(proxy, 1, 0, MEASURE_MS);
          const after = await Promise.all(all.map(usageOf));
          report({
            metric: "sharding.proxy.ask.c1.throughput",
            value: throughputOf(r),
            unit: "asks/s",
            note: noteOf(r, "1 ask in flight", warm),
          });
          report({ metric: "sharding.proxy.ask.c1.p50.us", value: r.p50us, unit: "µs" });
          // one ask at a time: the CPU it costs against its latency (the rest is waiting:
          // wake-ups and the socket between the processes); no ceiling, nothing is busy
          reportCost("sharding.proxy.ask.c1", r.asks, before, after, report, undefined, false);
        }
      });
    if (wantsOnRequest("sharding.proxy.ask.persisted.memory")) {
      await persistedRun(
        report,
        "sharding.proxy.ask.persisted.memory.c64",
        { kind: "memory" },
        "an in-memory journal per member (the cost of event sourcing without a store)",
        profDir === undefined ? undefined : join(profDir, "member-persisted-memory-c64.cpuprofile"),
      );
    }
    if (wants("sharding.proxy.ask.persisted.c64")) {
      const dir = mkdtempSync(join(tmpdir(), "shardkit-bench-proxy-"));
      try {
        const path = join(dir, "counters.db");
        await persistedRun(
          report,
          "sharding.proxy.ask.persisted.c64",
          { kind: "sqlite", path, synchronous: "normal" },
          'one SQLite file shared by both members, synchronous "normal"',
          profDir === undefined ? undefined : join(profDir, "member-persisted-c64.cpuprofile"),
        );
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
    if (wants("sharding.proxy.ask.persisted.full")) {
      const dir = mkdtempSync(join(tmpdir(), "shardkit-bench-proxy-"));
      try {
        const path = join(dir, "counters.db");
        await persistedRun(
          report,
          "sharding.proxy.ask.persisted.full.c64",
          { kind: "sqlite", path, synchronous: "full" },
          'one SQLite file shared by both members, synchronous "full" (the default)',
          profDir === undefined ? undefined : join(profDir, "member-persisted-full-c64.cpuprofile"),
        );
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
    if (wants("sharding.proxy.ask.persisted.pg")) {
      const url = process.env.SHARDKIT_PG_URL;
      if (url === undefined || url === "")
        process.stdout.write(
          "SKIP sharding.proxy.ask.persisted.pg.*: SHARDKIT_PG_URL is not set\n",
        );
      else {
        // a fresh table set per run, dropped afterwards, so runs do not pile up data
        const tablePrefix = `shardkit_bproxy_${process.pid}_`;
        const pool = new pg.Pool({ connectionString: url, max: 1 });
        try {
          await migratePostgres(pool, tablePrefix);
          await persistedRun(
            report,
            "sharding.proxy.ask.persisted.pg.c64",
            { kind: "pg", url, tablePrefix },
            `PostgreSQL shared by both members (pool max ${PG_POOL_MAX} each)`,
            profDir === undefined ? undefined : join(profDir, "member-persisted-pg-c64.cpuprofile"),
          );
        } finally {
          const tables = Object.values(postgresTables(tablePrefix)).join(", ");
          await pool.query(`DROP TABLE IF EXISTS ${tables}`);
          await pool.end();
        }
      }
    }
  },
};

if (process.env[CHILD_ENV] === "1") await childMain();
