/**
 * One member of the `npm start` sharding demo, run as a child process by ./main.ts.
 *
 * argv[2] is a JSON NodeConfig. The node is a real `ClusterNode` (TCP on 127.0.0.1, fast
 * timings) hosting the sharded entity type "Account" (30 shards). Accounts are
 * event-sourced: every deposit is an event in the shared SQLite file `db` (or the
 * PostgreSQL database `pgUrl`), so an account that moves to another node, or comes back
 * after a restart, continues with its balance. The coordinator's shard allocations live
 * in the same store (stateStoreMode "persistence"); with `remember` the accounts are
 * remembered entities, started again after a rebalance, crash or full restart.
 *
 * It talks JSON lines: one object per stdout line, commands on stdin (each with `id`,
 * answered by `{"event":"reply","id":...,"ok":true,...}`):
 * - `stats` -> `{ entities, shards: [shard ids hosted here], handled }`;
 * - `load {workers}` -> starts the load generator on this node: `workers` loops, each
 *   sending `deposit` asks to random accounts through `entityRefFor`;
 * - `load-stats` -> `{ completed, failed, inFlight, errors }` asks so far (errors: the
 *   first few failures);
 * - `acked` -> `{ acked: { accountId: deposits acknowledged } }` by this node's load;
 * - `deposit {account, amount}` -> `{ balance }` (an ask; fails after 5 s);
 * - `balances {accounts, timeoutMs?}` -> `{ sum, count, balances: { accountId: balance } }`
 *   over account-0 .. account-(accounts-1), each ask with its own timeout (default 15 s);
 * - `probe` -> `{ account, balance }` of one account live on this node (if any);
 * - `regions` -> `{ regions }`: how many regions the coordinator has registered;
 * - `stop-load` -> stops the load generator, `{ completed, failed, inFlight }`;
 * - `shutdown` -> replies, runs `node.shutdown()` (shards handed off, leave, stop), prints
 *   `{"event":"shutdown-done"}` and exits 0.
 * It prints `{"event":"ready"}` once started, `{"event":"up"}` once the member is Up, and
 * exits when stdin closes (the parent is gone). Logs go to stderr.
 */
import { createInterface } from "node:readline";
import {
  type ActorRef,
  Effect,
  EventSourcedBehavior,
  persistenceIdOf,
} from "../../src/actor/index.js";
import { ClusterNode, ClusterSharding, EntityTypeKey, msgpackCodec } from "../../src/index.js";
import type { Journal } from "../../src/ports/journal.js";
import type { LeaseStore } from "../../src/ports/lease.js";
import type { SnapshotStore } from "../../src/ports/snapshot-store.js";

export interface NodeConfig {
  readonly name: string;
  readonly port: number;
  /** "host:port" of every member. */
  readonly seedNodes: readonly string[];
  /** How many distinct accounts the load generator addresses. */
  readonly accounts: number;
  /** The SQLite file shared by every node (ignored when pgUrl is set). */
  readonly db: string;
  /** PostgreSQL instead of SQLite. */
  readonly pgUrl?: string;
  /** PostgreSQL table prefix (default shardkit_). */
  readonly pgTablePrefix?: string;
  /** Accounts are remembered entities. */
  readonly remember?: boolean;
  /** Port of the management HTTP API on 127.0.0.1 (`shardkit members --url ...`). */
  readonly managementPort?: number;
  /**
   * Keep sharding's own state (allocations, remembered accounts) in Distributed Data
   * instead of the database (stateStoreMode "ddata"), durable in `<ddataDir>/<name>.db`.
   */
  readonly ddataDir?: string;
  /**
   * Shard leases with fencing tokens in the same store (docs/sharding.md, "Leases and
   * fencing"); events are then tagged with the writing member's name and stamped with
   * the wall clock, so tests can check who wrote what when.
   */
  readonly leases?: boolean;
  /**
   * Host accounts only on members with this role (default: every member); a member
   * without it routes through a proxy region (a client, e.g. the load of a rolling
   * restart test). Give the member its roles with `roles`.
   */
  readonly role?: string;
  readonly roles?: readonly string[];
}

export type AccountMsg =
  | { readonly type: "deposit"; readonly amount: number; readonly replyTo: ActorRef<number> }
  | { readonly type: "balance"; readonly replyTo: ActorRef<number> };
type AccountEvent = { readonly type: "deposited"; readonly amount: number };
type AccountState = { readonly balance: number };
const Eff = Effect.of<AccountEvent, AccountState>();

export const Account = EntityTypeKey<AccountMsg>("Account");
export const NUMBER_OF_SHARDS = 30;

const config = JSON.parse(process.argv[2] ?? "{}") as NodeConfig;

interface Store {
  readonly journal: Journal;
  readonly snapshots: SnapshotStore;
  readonly leases: LeaseStore;
  close(): Promise<void>;
}

async function openStore(): Promise<Store> {
  if (config.pgUrl !== undefined) {
    const { postgresPersistence, PostgresLeaseStore } = await import(
      "../../src/persistence/postgres/index.js"
    );
    const pg = (await import("pg")).default;
    const pool = new pg.Pool({ connectionString: config.pgUrl, max: 4 });
    const tablePrefix = config.pgTablePrefix ?? "shardkit_";
    const p = postgresPersistence({ pool, tablePrefix });
    const { createNodeRuntime } = await import("../../src/runtime/node/index.js");
    const rt = createNodeRuntime({ logLevel: "off" });
    const leases = new PostgresLeaseStore({
      pool,
      tablePrefix,
      clock: rt.clock,
      scheduler: rt.scheduler,
    });
    return { ...p, leases, close: () => p.close().then(() => pool.end()) };
  }
  const { sqlitePersistence } = await import("../../src/persistence/sqlite/index.js");
  return sqlitePersistence({ path: config.db });
}

const store = await openStore();

function emit(event: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(event)}\n`);
}

/** Live accounts on this node: entity id -> shard id (set on start, removed on stop). */
const live = new Map<string, string>();
let handled = 0;

const node = await ClusterNode.start({
  systemName: "demo",
  host: "127.0.0.1",
  port: config.port,
  seedNodes: config.seedNodes,
  ...(config.roles === undefined ? {} : { roles: config.roles }),
  ...(config.managementPort === undefined ? {} : { management: { port: config.managementPort } }),
  settings: {
    periodicTasksInitialDelayMs: 0,
    gossipIntervalMs: 200,
    leaderActionsIntervalMs: 200,
    unreachableNodesReaperIntervalMs: 200,
    heartbeatIntervalMs: 200,
    seedNodeTimeoutMs: 1_000,
    seedNodeInitJoinResendIntervalMs: 200,
    retryUnsuccessfulJoinAfterMs: 3_000,
    expectedResponseAfterMs: 500,
  },
  failureDetector: { acceptableHeartbeatPauseMs: 3_000, firstHeartbeatEstimateMs: 200 },
  downing: { stableAfterMs: 5_000 },
  shutdown: {
    phases: {
      "cluster-sharding-shutdown-region": { timeoutMs: 10_000 },
      "cluster-exiting": { timeoutMs: 5_000 },
    },
  },
});

async function shardingState() {
  if (config.ddataDir === undefined)
    // Shard allocations (and remembered accounts) in the same store as the accounts' events.
    return { persistence: { journal: store.journal, snapshots: store.snapshots } };
  const { SqliteDDataStore } = await import("../../src/persistence/sqlite/index.js");
  const durableStore = new SqliteDDataStore({ path: `${config.ddataDir}/${config.name}.db` });
  return { stateStoreMode: "ddata" as const, ddata: { durableStore } };
}

const sharding = ClusterSharding.get(node);
sharding.init({
  typeKey: Account,
  numberOfShards: NUMBER_OF_SHARDS,
  ...(config.role === undefined ? {} : { role: config.role }),
  ...(await shardingState()),
  rememberEntities: config.remember ?? false,
  ...(config.leases === true ? { lease: { provider: store.leases } } : {}),
  // Fast demo timings: regions (re)register within 0.5 s, imbalances are fixed every 2 s.
  settings: { region: { retryIntervalMs: 500 }, coordinator: { rebalanceIntervalMs: 2_000 } },
  createBehavior: ({ entityId, shardId, fence }) => {
    live.set(entityId, shardId);
    return EventSourcedBehavior.create<AccountMsg, AccountEvent, AccountState>({
      persistenceId: persistenceIdOf(Account.name, entityId),
      ...(fence === undefined
        ? {}
        : { fence, tagger: () => [config.name], timestampMs: () => Date.now() }),
      emptyState: { balance: 0 },
      commandHandler: (state, m) => {
        handled++;
        return m.type === "deposit"
          ? Eff.persist({ type: "deposited", amount: m.amount }).thenReply(
              m.replyTo,
              (s) => s.balance,
            )
          : Eff.reply(m.replyTo, state.balance);
      },
      eventHandler: (state, e) => ({ balance: state.balance + e.amount }),
      journal: store.journal,
      eventCodec: msgpackCodec<AccountEvent>(),
      snapshots: store.snapshots,
      snapshotCodec: msgpackCodec<AccountState>(),
      snapshotAfter: 100,
      onPostStop: () => live.delete(entityId),
    });
  },
});

node.cluster.subscribe(
  (e) => {
    if (
      e.type === "member-up" &&
      e.member.uniqueAddress.address.port === config.port &&
      e.member.uniqueAddress.address.host === "127.0.0.1"
    )
      emit({ event: "up" });
  },
  { initialState: true },
);

let loadOk = 0;
let loadFailed = 0;
/** The first few failures of the load's asks, for diagnostics. */
const loadErrors: string[] = [];
/** Deposit asks sent and not yet answered or timed out. */
let loadInFlight = 0;
let loadRunning = false;
/** Deposits acknowledged per account by this node's load generator. */
const acked = new Map<string, number>();

function balanceOf(id: string, timeoutMs = 5_000): Promise<number> {
  return sharding
    .entityRefFor(Account, id)
    .ask((replyTo: ActorRef<number>) => ({ type: "balance", replyTo }), { timeoutMs });
}

async function balances(
  n: number,
  timeoutMs = 15_000,
): Promise<{ sum: number; count: number; balances: Record<string, number> }> {
  let sum = 0;
  let count = 0;
  const each: Record<string, number> = {};
  const BATCH = 100;
  for (let i = 0; i < n; i += BATCH) {
    const ids = Array.from({ length: Math.min(BATCH, n - i) }, (_, k) => `account-${i + k}`);
    const got = await Promise.all(ids.map((id) => balanceOf(id, timeoutMs)));
    got.forEach((b, k) => {
      each[ids[k] as string] = b;
      sum += b;
      count++;
    });
  }
  return { sum, count, balances: each };
}

async function worker(): Promise<void> {
  while (loadRunning) {
    const id = `account-${Math.floor(Math.random() * config.accounts)}`;
    loadInFlight++;
    try {
      await sharding
        .entityRefFor(Account, id)
        .ask((replyTo: ActorRef<number>) => ({ type: "deposit", amount: 1, replyTo }), {
          timeoutMs: 5_000,
        });
      loadOk++;
      acked.set(id, (acked.get(id) ?? 0) + 1);
    } catch (error) {
      loadFailed++;
      if (loadErrors.length < 5) loadErrors.push(`${id}: ${String(error)}`);
    } finally {
      loadInFlight--;
    }
  }
}

type Command = Readonly<Record<string, unknown>> & { readonly cmd: string; readonly id: number };

let exiting = false;

async function handle(c: Command): Promise<Record<string, unknown>> {
  switch (c.cmd) {
    case "stats":
      return { entities: live.size, shards: [...new Set(live.values())].sort(), handled };
    case "load": {
      if (!loadRunning) {
        loadRunning = true;
        for (let i = 0; i < Number(c.workers ?? 100); i++) void worker();
      }
      return {};
    }
    case "load-stats":
      return { completed: loadOk, failed: loadFailed, inFlight: loadInFlight, errors: loadErrors };
    case "stop-load":
      loadRunning = false;
      return { completed: loadOk, failed: loadFailed, inFlight: loadInFlight };
    case "acked":
      return { acked: Object.fromEntries(acked) };
    case "deposit": {
      const balance = await sharding
        .entityRefFor(Account, String(c.account))
        .ask(
          (replyTo: ActorRef<number>) => ({ type: "deposit", amount: Number(c.amount), replyTo }),
          {
            timeoutMs: 5_000,
          },
        );
      return { balance };
    }
    case "balance":
      return { balance: await balanceOf(String(c.account)) };
    case "regions":
      return { regions: (await sharding.getCurrentRegions(Account)).length };
    case "probe": {
      const account = [...live.keys()].sort()[0];
      return account === undefined ? {} : { account, balance: await balanceOf(account) };
    }
    case "balances":
      return await balances(
        Number(c.accounts ?? config.accounts),
        c.timeoutMs === undefined ? undefined : Number(c.timeoutMs),
      );
    case "shutdown":
      if (!exiting) {
        exiting = true;
        loadRunning = false;
        node
          .shutdown("user")
          .then(() => store.close())
          .then(
            () => {
              emit({ event: "shutdown-done" });
              process.exit(0);
            },
            (error: unknown) => {
              process.stderr.write(`[${config.name}] shutdown failed: ${String(error)}\n`);
              process.exit(1);
            },
          );
      }
      return {};
    default:
      throw new Error(`unknown command ${c.cmd}`);
  }
}

createInterface({ input: process.stdin })
  .on("line", (line) => {
    let c: Command;
    try {
      c = JSON.parse(line) as Command;
    } catch {
      return;
    }
    handle(c).then(
      (r) => emit({ event: "reply", id: c.id, ok: true, ...r }),
      (error: unknown) => emit({ event: "reply", id: c.id, ok: false, error: String(error) }),
    );
  })
  .on("close", () => process.exit(0));

emit({ event: "ready", pid: process.pid });
