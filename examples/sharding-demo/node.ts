/**
 * One member of the `npm start` sharding demo, run as a child process by ./main.ts.
 *
 * argv[2] is a JSON NodeConfig. The node is a real `ClusterNode` (TCP on 127.0.0.1, fast
 * timings) hosting the sharded entity type "Account" (30 shards). Accounts keep their
 * balance in memory only: when a shard moves, its accounts start again on the new node
 * from 0 (persistence on SQLite comes later).
 *
 * It talks JSON lines: one object per stdout line, commands on stdin (each with `id`,
 * answered by `{"event":"reply","id":...,"ok":true,...}`):
 * - `stats` -> `{ entities, shards: [shard ids hosted here], handled }`;
 * - `load {workers}` -> starts the load generator on this node: `workers` loops, each
 *   sending `deposit` asks to random accounts through `entityRefFor`;
 * - `load-stats` -> `{ ok: completed asks so far, failed }`;
 * - `shutdown` -> replies, runs `node.shutdown()` (shards handed off, leave, stop), prints
 *   `{"event":"shutdown-done"}` and exits 0.
 * It prints `{"event":"ready"}` once started, `{"event":"up"}` once the member is Up, and
 * exits when stdin closes (the parent is gone). Logs go to stderr.
 */
import { createInterface } from "node:readline";
import { type ActorRef, Behaviors } from "../../src/actor/index.js";
import { ClusterNode, ClusterSharding, EntityTypeKey } from "../../src/api/index.js";

export interface NodeConfig {
  readonly name: string;
  readonly port: number;
  /** "host:port" of every member. */
  readonly seedNodes: readonly string[];
  /** How many distinct accounts the load generator addresses. */
  readonly accounts: number;
}

export type AccountMsg =
  | { readonly type: "deposit"; readonly amount: number; readonly replyTo: ActorRef<number> }
  | { readonly type: "balance"; readonly replyTo: ActorRef<number> };

export const Account = EntityTypeKey<AccountMsg>("Account");
export const NUMBER_OF_SHARDS = 30;

const config = JSON.parse(process.argv[2] ?? "{}") as NodeConfig;

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

const sharding = ClusterSharding.get(node);
sharding.init({
  typeKey: Account,
  numberOfShards: NUMBER_OF_SHARDS,
  // Fast demo timings: regions (re)register within 0.5 s, imbalances are fixed every 2 s.
  settings: { region: { retryIntervalMs: 500 }, coordinator: { rebalanceIntervalMs: 2_000 } },
  createBehavior: ({ entityId, shardId }) =>
    Behaviors.setup<AccountMsg>(() => {
      live.set(entityId, shardId);
      let balance = 0;
      return Behaviors.receive<AccountMsg>(
        (_ctx, m) => {
          handled++;
          if (m.type === "deposit") balance += m.amount;
          m.replyTo.tell(balance);
          return undefined;
        },
        (_ctx, signal) => {
          if (signal.type === "PostStop") live.delete(entityId);
          return undefined;
        },
      );
    }),
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
let loadRunning = false;

async function worker(): Promise<void> {
  while (loadRunning) {
    const id = `account-${Math.floor(Math.random() * config.accounts)}`;
    try {
      await sharding
        .entityRefFor(Account, id)
        .ask((replyTo: ActorRef<number>) => ({ type: "deposit", amount: 1, replyTo }), {
          timeoutMs: 5_000,
        });
      loadOk++;
    } catch {
      loadFailed++;
    }
  }
}

type Command = Readonly<Record<string, unknown>> & { readonly cmd: string; readonly id: number };

let exiting = false;

function handle(c: Command): Record<string, unknown> {
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
      return { completed: loadOk, failed: loadFailed };
    case "shutdown":
      if (!exiting) {
        exiting = true;
        loadRunning = false;
        node.shutdown("user").then(
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
    try {
      emit({ event: "reply", id: c.id, ok: true, ...handle(c) });
    } catch (error) {
      emit({ event: "reply", id: c.id, ok: false, error: String(error) });
    }
  })
  .on("close", () => process.exit(0));

emit({ event: "ready", pid: process.pid });
