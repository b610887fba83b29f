/**
 * A cluster member hosting sharded counters, as a child process, for the real-process
 * sharding tests (test/cluster-real/sharding-*.test.ts), driven through the JSON-lines
 * harness (test/support/child-process.ts, child-io.ts).
 *
 * argv[2] is a JSON ShardingNodeConfig. The node is a real `ClusterNode` (TCP on
 * 127.0.0.1:<port>, FAST timings, SIGTERM/SIGINT run the coordinated shutdown and exit 0)
 * with `ClusterSharding.init` of every entity type in `types` (a counter entity each,
 * FAST_SHARDING_SETTINGS under the type's own settings). Lines it prints (`t` = epoch ms,
 * the clock the processes of this machine share):
 * - `{"event":"ready","hostPort","port","uid","pid","managementUrl"}` once started
 *   (managementUrl: null unless `management` is configured);
 * - `{"event":"cluster",...}` per cluster event (as cluster-node-main.ts);
 * - `{"event":"entity-started","type","id","inc","node","pid","t"}` when an entity
 *   incarnation starts here and `{"event":"entity-stopped",...,"total","count","senders"}`
 *   on its PostStop, with its final state (see EntityReport): the test's oracle replays
 *   them (never two live incarnations; messages neither lost nor duplicated);
 * - `{"event":"log","level","msg","logEvent",...fields}` for every warn/error log record
 *   (also printed on stderr as a JSON line; the record's own `event` field is `logEvent`);
 * - `{"event":"shutdown-started","reason","t"}` when the coordinated shutdown begins
 *   (whatever started it: the `shutdown` command, SIGTERM, leaving, being downed); the
 *   process exits 0 once it is over.
 *
 * The counter entity: `add {n, from, seq}` adds n and records, per sender `from`, a
 * SenderTally of the seqs; `get` answers an EntityReport; `passivate` asks its shard to
 * passivate it (printing `{"event":"passivating",...}` right after) with the stop message
 * `linger-stop`, on which it stays alive PASSIVATION_LINGER_MS more before it stops.
 *
 * Commands (one JSON line each with `id`; one reply line each; `type` defaults to the
 * first entity type):
 * - `state` -> cluster state (as cluster-node-main.ts);
 * - `tell {ids, n?, times?}` -> `{sent}`: `times` rounds of one `add` to each id, this
 *   node being the sender (seq numbers per entity, counted from 1 per node);
 * - `load {ids, intervalMs}` starts one `add` to each id every intervalMs; `load-stop`
 *   stops it; both reply `{sent}`;
 * - `sent` -> `{from, sent: {id: messages sent by this node}}`;
 * - `get {ids, timeoutMs?, retryForMs?}` -> `{reports}` (EntityReport per id, in order);
 *   an ask that fails is retried until retryForMs has passed, then the command fails;
 * - `region-state`, `regions`, `stats {timeoutMs?}`, `location {entityId}`: the
 *   ClusterSharding queries;
 * - `passivate {ids}`: sends `passivate` to each;
 * - `join {address}` (for a node started without seed nodes), `leave {address?}` (default:
 *   this node), `shutdown` (node.shutdown("user")), `exit`.
 */
import { type ActorRef, Behaviors } from "../../src/actor/index.js";
import {
  ClusterNode,
  ClusterSharding,
  EntityTypeKey,
  type ShardedEntityOptions,
} from "../../src/api/index.js";
import type { DiscoveryOptions, ManagementOptions } from "../../src/api/node-extensions.js";
import type { ClusterOptions } from "../../src/cluster/membership/index.js";
import { leastShardStrategy } from "../../src/core/coordinator/coordinator-strategy.js";
import { managementOf } from "../../src/management/index.js";
import type { LogLevel } from "../../src/ports/logger.js";
import { ConsoleLogger, createNodeRuntime } from "../../src/runtime/node/index.js";
import {
  type Command,
  clusterStateReply,
  emit,
  emitClusterEvents,
  exitAfter,
  serveCommands,
} from "./child-io.js";
import {
  FAST_CLUSTER_SETTINGS,
  FAST_FAILURE_DETECTOR,
  FAST_SHARDING_SETTINGS,
  SBR_STABLE_AFTER_MS,
} from "./fast-settings.js";

/** One entity type to init on this node. */
export interface EntityTypeConfig {
  readonly name: string;
  readonly role?: string;
  readonly numberOfShards?: number;
  /** Merged over FAST_SHARDING_SETTINGS. */
  readonly settings?: ShardedEntityOptions<unknown>["settings"];
  /** Limits of the default least-shard strategy. */
  readonly leastShard?: { readonly absoluteLimit?: number; readonly relativeLimit?: number };
}

/** Configuration of one child node (argv[2], JSON). */
export interface ShardingNodeConfig {
  readonly port: number;
  /** Seed nodes as "host:port". */
  readonly seedNodes: readonly string[];
  readonly roles?: readonly string[];
  readonly types: readonly EntityTypeConfig[];
  /** Overrides on top of FAST_CLUSTER_SETTINGS. */
  readonly settings?: ClusterOptions["settings"];
  readonly logLevel?: LogLevel;
  /** Start the management HTTP server (its URL is in the `ready` line as managementUrl). */
  readonly management?: ManagementOptions;
  /** Remoting host (default 127.0.0.1). */
  readonly host?: string;
  /** The cluster secret (required by the safe default off loopback, docs/security.md). */
  readonly secret?: string;
  /** Join by discovery (then `seedNodes` must be empty). */
  readonly discovery?: DiscoveryOptions;
}

/**
 * Per sender: the first and last seq received, the lowest and highest, how many, how many
 * arrived out of order (seq != previous + 1) and how many were repeats of one received
 * before. `count === max - min + 1` with no repeat means every seq in min..max arrived
 * exactly once.
 */
export interface SenderTally {
  first: number;
  last: number;
  min: number;
  max: number;
  count: number;
  bad: number;
  dup: number;
}

/** What a counter incarnation reports (get, and entity-stopped). */
export interface EntityReport {
  readonly type: string;
  readonly id: string;
  /** Incarnation id: `<pid>:<n>`, unique over the test run. */
  readonly inc: string;
  readonly node: string;
  readonly pid: number;
  readonly total: number;
  readonly count: number;
  readonly senders: Readonly<Record<string, SenderTally>>;
}

/**
 * How long a passivating entity keeps running after its shard sent it the stop message:
 * messages that reach the shard meanwhile are buffered for the next incarnation (S4).
 */
const PASSIVATION_LINGER_MS = 500;

/** Pause between two attempts of a failed `get` ask. */
const GET_RETRY_PAUSE_MS = 100;

type CounterMsg =
  | { readonly type: "add"; readonly n: number; readonly from: string; readonly seq: number }
  | { readonly type: "get"; readonly replyTo: ActorRef<EntityReport> }
  | { readonly type: "passivate" }
  /** The stop message of a passivation: the entity lingers PASSIVATION_LINGER_MS, then stops. */
  | { readonly type: "linger-stop" }
  | { readonly type: "stop-now" };

const config = JSON.parse(process.argv[2] ?? "{}") as ShardingNodeConfig;
const selfHost = config.host ?? "127.0.0.1";
const selfHostPort = `${selfHost}:${config.port}`;
const firstType = config.types[0]?.name;
if (firstType === undefined) throw new Error("no entity type configured");

/** Warn and error records also become `log` events (scenario S16 in docs/scenarios.md looks for them). */
const logger = new ConsoleLogger({
  level: config.logLevel ?? "warn",
  format: "json",
  write: (line) => {
    process.stderr.write(`${line}\n`);
    try {
      const r = JSON.parse(line) as Record<string, unknown>;
      if (r.level === "warn" || r.level === "error")
        emit({ ...r, event: "log", logEvent: r.event, t: Date.now() });
    } catch {
      // the json format always parses; nothing to report otherwise
    }
  },
});

const node = await ClusterNode.start({
  systemName: "sk",
  host: selfHost,
  port: config.port,
  seedNodes: config.seedNodes,
  roles: config.roles,
  settings: { ...FAST_CLUSTER_SETTINGS, ...config.settings },
  failureDetector: FAST_FAILURE_DETECTOR,
  downing: { stableAfterMs: SBR_STABLE_AFTER_MS },
  runtime: createNodeRuntime({ logger }),
  ...(config.management === undefined ? {} : { management: config.management }),
  ...(config.secret === undefined ? {} : { remoting: { secret: config.secret } }),
  ...(config.discovery === undefined ? {} : { discovery: config.discovery }),
});
emitClusterEvents(node.cluster);

// Whatever starts the coordinated shutdown, report it and exit once it is over (on a
// signal the library's handler exits first, with the same code).
node.coordinatedShutdown.addTask("before-service-unbind", "test-report", ({ reason }) => {
  emit({ event: "shutdown-started", reason, t: Date.now() });
  node.coordinatedShutdown.run().then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`shutdown failed: ${String(error)}\n`);
      process.exit(1);
    },
  );
});

let incarnations = 0;

function counter(type: string, entityId: string, passivate: (stopMessage: CounterMsg) => void) {
  return Behaviors.setup<CounterMsg>(() => {
    const inc = `${process.pid}:${++incarnations}`;
    const base = { type, id: entityId, inc, node: selfHostPort, pid: process.pid };
    emit({ event: "entity-started", ...base, t: Date.now() });
    let total = 0;
    let count = 0;
    const senders: Record<string, SenderTally> = {};
    const seqs = new Map<string, Set<number>>();
    const report = (): EntityReport => ({ ...base, total, count, senders });
    return Behaviors.receive<CounterMsg>(
      (ctx, m) => {
        if (m.type === "add") {
          total += m.n;
          count++;
          const s = senders[m.from];
          const seen = seqs.get(m.from) ?? new Set<number>();
          seqs.set(m.from, seen);
          const dup = seen.has(m.seq) ? 1 : 0;
          seen.add(m.seq);
          if (s === undefined)
            senders[m.from] = {
              first: m.seq,
              last: m.seq,
              min: m.seq,
              max: m.seq,
              count: 1,
              bad: 0,
              dup,
            };
          else {
            if (m.seq !== s.last + 1) s.bad++;
            s.last = m.seq;
            s.min = Math.min(s.min, m.seq);
            s.max = Math.max(s.max, m.seq);
            s.count++;
            s.dup += dup;
          }
        } else if (m.type === "get") m.replyTo.tell(report());
        else if (m.type === "passivate") {
          passivate({ type: "linger-stop" });
          emit({ event: "passivating", ...base, t: Date.now() });
        } else if (m.type === "linger-stop")
          ctx.timers.startSingleTimer("stop", { type: "stop-now" }, PASSIVATION_LINGER_MS);
        else return Behaviors.stopped;
        return undefined;
      },
      (_ctx, signal) => {
        if (signal.type === "PostStop")
          emit({ event: "entity-stopped", ...report(), t: Date.now() });
        return undefined;
      },
    );
  });
}

const sharding = ClusterSharding.get(node);
const keys = new Map<string, EntityTypeKey<CounterMsg>>();
for (const t of config.types) {
  const typeKey = EntityTypeKey<CounterMsg>(t.name);
  keys.set(t.name, typeKey);
  sharding.init({
    typeKey,
    role: t.role,
    numberOfShards: t.numberOfShards ?? 10,
    allocationStrategy: t.leastShard === undefined ? undefined : leastShardStrategy(t.leastShard),
    settings: {
      region: { ...FAST_SHARDING_SETTINGS.region, ...t.settings?.region },
      coordinator: { ...FAST_SHARDING_SETTINGS.coordinator, ...t.settings?.coordinator },
      shard: { ...FAST_SHARDING_SETTINGS.shard, ...t.settings?.shard },
    },
    createBehavior: ({ entityId, passivate }) => counter(t.name, entityId, passivate),
  });
}

/** Messages this node sent, per type and entity id (the last seq used). */
const sentBy = new Map<string, Map<string, number>>();
const loads = new Map<string, NodeJS.Timeout>();

function keyOf(c: Command): EntityTypeKey<CounterMsg> {
  const name = typeof c.type === "string" ? c.type : (firstType as string);
  const k = keys.get(name);
  if (k === undefined) throw new Error(`entity type ${name} is not initialised here`);
  return k;
}

function idsOf(c: Command): string[] {
  if (!Array.isArray(c.ids)) throw new Error("ids: an array of entity ids expected");
  return c.ids.map(String);
}

function sentOf(type: string): Map<string, number> {
  let m = sentBy.get(type);
  if (m === undefined) {
    m = new Map();
    sentBy.set(type, m);
  }
  return m;
}

function tellAdd(key: EntityTypeKey<CounterMsg>, id: string, n: number): void {
  const sent = sentOf(key.name);
  const seq = (sent.get(id) ?? 0) + 1;
  sent.set(id, seq);
  sharding.entityRefFor(key, id).tell({ type: "add", n, from: selfHostPort, seq });
}

function sentReply(key: EntityTypeKey<CounterMsg>): Record<string, unknown> {
  return { from: selfHostPort, sent: Object.fromEntries(sentOf(key.name)) };
}

async function getReport(
  key: EntityTypeKey<CounterMsg>,
  id: string,
  timeoutMs: number,
  retryForMs: number,
): Promise<EntityReport> {
  const deadline = Date.now() + retryForMs;
  for (;;) {
    try {
      return await sharding
        .entityRefFor(key, id)
        .ask((replyTo: ActorRef<EntityReport>) => ({ type: "get", replyTo }), { timeoutMs });
    } catch (error) {
      if (Date.now() >= deadline)
        throw new Error(`get ${id}: ${error instanceof Error ? error.message : String(error)}`);
      await new Promise((r) => setTimeout(r, GET_RETRY_PAUSE_MS));
    }
  }
}

async function handle(c: Command): Promise<Record<string, unknown>> {
  switch (c.cmd) {
    case "state":
      return clusterStateReply(node.cluster);
    case "tell": {
      const key = keyOf(c);
      const ids = idsOf(c);
      const times = Number(c.times ?? 1);
      for (let i = 0; i < times; i++) for (const id of ids) tellAdd(key, id, Number(c.n ?? 1));
      return sentReply(key);
    }
    case "load": {
      const key = keyOf(c);
      const ids = idsOf(c);
      if (loads.has(key.name)) throw new Error(`load of ${key.name} already running`);
      const tick = () => {
        for (const id of ids) tellAdd(key, id, 1);
      };
      tick();
      loads.set(key.name, setInterval(tick, Number(c.intervalMs ?? 100)));
      return sentReply(key);
    }
    case "load-stop": {
      const key = keyOf(c);
      clearInterval(loads.get(key.name));
      loads.delete(key.name);
      return sentReply(key);
    }
    case "sent":
      return sentReply(keyOf(c));
    case "get": {
      const key = keyOf(c);
      const timeoutMs = Number(c.timeoutMs ?? 3_000);
      const retryForMs = Number(c.retryForMs ?? 0);
      const reports = await Promise.all(
        idsOf(c).map((id) => getReport(key, id, timeoutMs, retryForMs)),
      );
      return { reports };
    }
    case "region-state":
      return { state: await sharding.getShardRegionState(keyOf(c)) };
    case "regions":
      return { regions: await sharding.getCurrentRegions(keyOf(c)) };
    case "stats":
      return {
        stats: await sharding.getClusterShardingStats(keyOf(c), {
          timeoutMs: Number(c.timeoutMs ?? 3_000),
        }),
      };
    case "location":
      return { location: await sharding.getEntityLocation(keyOf(c), String(c.entityId)) };
    case "passivate": {
      const key = keyOf(c);
      for (const id of idsOf(c)) sharding.entityRefFor(key, id).tell({ type: "passivate" });
      return {};
    }
    case "join":
      node.cluster.join(String(c.address));
      return {};
    case "leave":
      node.cluster.leave(typeof c.address === "string" ? c.address : selfHostPort);
      return {};
    case "shutdown":
      exitAfter(() => node.shutdown("user"));
      return {};
    case "exit":
      exitAfter(() => node.system.terminate());
      return {};
    default:
      throw new Error(`unknown command ${c.cmd}`);
  }
}

serveCommands(handle, () => process.exit(0));

emit({
  event: "ready",
  hostPort: selfHostPort,
  port: config.port,
  uid: String(node.cluster.self.uid),
  pid: process.pid,
  managementUrl: managementOf(node)?.url ?? null,
});
