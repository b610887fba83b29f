/**
 * One member of the rolling-upgrade test (./rolling-upgrade.test.ts), as a child process.
 *
 * argv[2] is a JSON UpgradeNodeConfig. Two builds of one application live here, chosen by
 * `build`:
 *
 * - **v1** hosts the entity type "Wallet" with the message `deposit` and persists the
 *   event `Deposited { amount }` (manifest "Deposited", version 1).
 * - **v2** renamed the message to `credit` (and still accepts `deposit`: its schema is the
 *   union) and the event to `Credited { amount, currency }` (version 2). Its event codec
 *   reads v1's events through the alias Deposited -> Credited and an upcaster 1 -> 2 that
 *   fills `currency: "EUR"`; v2 writes `currency: "USD"`, so the state tells how many of
 *   an account's events were upcast from v1.
 * - **client** hosts nothing (the type's role is "wallet"; the client has none, so it only
 *   proxies). It runs the load: `workers` loops of asks to random wallets, sending `deposit`
 *   (the old message) until told `mode: "credit"`, which a test does only once every
 *   member reports appVersion 2.0.0 (the rule "new message types only after every member
 *   knows them", docs/evolution.md).
 *
 * Both builds validate messages with a zod schema (`EntityTypeKey(name, { schema })`), so
 * a `credit` reaching a v1 member would be refused as "invalid-message", not misread.
 *
 * JSON lines on stdout / commands on stdin (`{ id, cmd, ... }`, answered by
 * `{"event":"reply","id":...,"ok":true,...}`):
 * - `load {workers, mode}` starts or switches the load; `stop-load` stops it and resolves
 *   once nothing is in flight: `{ completed, failed, errors, acked }`;
 * - `load-stats` -> `{ completed, failed }`;
 * - `wallets {n}` -> `{ wallets: { id: { balance, eur, usd } } }` over wallet-0..n-1;
 * - `versions` -> `{ versions: [appVersion of each Up member] }`;
 * - `regions` -> `{ regions }` registered at the coordinator;
 * - `shutdown` -> graceful `node.shutdown()`, then `{"event":"shutdown-done"}` and exit 0.
 * Prints `{"event":"up"}` once the member is Up. Exits when stdin closes.
 */
import { createInterface } from "node:readline";
import { z } from "zod";
import {
  type ActorRef,
  Effect,
  EventSourcedBehavior,
  persistenceIdOf,
} from "../../src/actor/index.js";
import {
  ClusterNode,
  ClusterSharding,
  EntityTypeKey,
  type EventCodec,
  manifestCodec,
} from "../../src/index.js";
import { sqlitePersistence } from "../../src/persistence/sqlite/index.js";

export interface UpgradeNodeConfig {
  readonly build: "v1" | "v2" | "client";
  readonly port: number;
  readonly seedNodes: readonly string[];
  /** The SQLite file shared by every member. */
  readonly db: string;
  readonly wallets: number;
}

const config = JSON.parse(process.argv[2] ?? "{}") as UpgradeNodeConfig;

/** What a wallet answers: v1 knows no currencies (every event is a v1 deposit). */
interface WalletView {
  readonly balance: number;
  readonly eur: number;
  readonly usd: number;
}

const replyTo = z.custom<ActorRef<WalletView>>((v) => typeof v === "object" && v !== null);
const depositV1 = z.object({
  type: z.literal("deposit"),
  amount: z.number().int().positive(),
  replyTo,
});
const creditV2 = z.object({
  type: z.literal("credit"),
  amount: z.number().int().positive(),
  currency: z.string().min(3),
  replyTo,
});
const balance = z.object({ type: z.literal("balance"), replyTo });
/** The hand-off stop message: stops a wallet once its in-flight events are written. */
const stopM = z.object({ type: z.literal("stop") });
const V1Msg = z.discriminatedUnion("type", [depositV1, balance, stopM]);
const V2Msg = z.discriminatedUnion("type", [depositV1, creditV2, balance, stopM]);
type V2Msg = z.infer<typeof V2Msg>;

type DepositedV1 = { readonly type: "Deposited"; readonly amount: number };
type CreditedV2 = { readonly type: "Credited"; readonly amount: number; readonly currency: string };

// v1 hosts with its schema; the client (which hosts nothing) and v2 with the union.
const Wallet = EntityTypeKey<V2Msg>("Wallet", {
  schema: config.build === "v1" ? (V1Msg as unknown as typeof V2Msg) : V2Msg,
});

const v1Events: EventCodec<DepositedV1> = manifestCodec<DepositedV1>({
  versions: { Deposited: 1 },
});
const v2Events: EventCodec<CreditedV2> = manifestCodec<CreditedV2>({
  versions: { Credited: 2 },
  aliases: { Deposited: "Credited" },
  upcasters: [
    {
      manifest: "Credited",
      from: 1,
      to: 2,
      up: (old) => ({ ...(old as { amount: number }), type: "Credited", currency: "EUR" }),
    },
  ],
});

const store = config.build === "client" ? undefined : sqlitePersistence({ path: config.db });

function emit(event: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(event)}\n`);
}

const node = await ClusterNode.start({
  systemName: "upgrade",
  host: "127.0.0.1",
  port: config.port,
  seedNodes: config.seedNodes,
  roles: config.build === "client" ? [] : ["wallet"],
  appVersion: config.build === "v2" ? "2.0.0" : "1.0.0",
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
  failureDetector: { acceptableHeartbeatPauseMs: 5_000, firstHeartbeatEstimateMs: 200 },
  downing: { stableAfterMs: 5_000 },
  shutdown: {
    phases: {
      "cluster-sharding-shutdown-region": { timeoutMs: 15_000 },
      "cluster-exiting": { timeoutMs: 5_000 },
    },
  },
});

const sharding = ClusterSharding.get(node);
type State = WalletView;
const empty: State = { balance: 0, eur: 0, usd: 0 };

sharding.init({
  typeKey: Wallet,
  role: "wallet",
  handOffStopMessage: { type: "stop" },
  numberOfShards: 12,
  ...(store === undefined
    ? {}
    : { persistence: { journal: store.journal, snapshots: store.snapshots } }),
  settings: { region: { retryIntervalMs: 500 }, coordinator: { rebalanceIntervalMs: 2_000 } },
  createBehavior: ({ entityId }) => {
    if (store === undefined) throw new Error("the client hosts no wallets");
    const persistenceId = persistenceIdOf(Wallet.name, entityId);
    if (config.build === "v1") {
      const Eff = Effect.of<DepositedV1, State>();
      return EventSourcedBehavior.create<V2Msg, DepositedV1, State>({
        persistenceId,
        emptyState: empty,
        commandHandler: (state, m) =>
          m.type === "deposit"
            ? Eff.persist({ type: "Deposited", amount: m.amount }).thenReply(m.replyTo, (s) => s)
            : m.type === "balance"
              ? Eff.reply(m.replyTo, state)
              : m.type === "stop"
                ? Eff.stop()
                : Eff.unhandled(),
        // v1 has no currencies: its view counts every deposit as EUR, the upcaster's default.
        eventHandler: (s, e) => ({ ...s, balance: s.balance + e.amount, eur: s.eur + 1 }),
        journal: store.journal,
        eventCodec: v1Events,
      });
    }
    const Eff = Effect.of<CreditedV2, State>();
    return EventSourcedBehavior.create<V2Msg, CreditedV2, State>({
      persistenceId,
      emptyState: empty,
      commandHandler: (state, m) => {
        switch (m.type) {
          case "deposit":
            return Eff.persist({ type: "Credited", amount: m.amount, currency: "USD" }).thenReply(
              m.replyTo,
              (s) => s,
            );
          case "credit":
            return Eff.persist({
              type: "Credited",
              amount: m.amount,
              currency: m.currency,
            }).thenReply(m.replyTo, (s) => s);
          case "balance":
            return Eff.reply(m.replyTo, state);
          case "stop":
            return Eff.stop();
        }
      },
      eventHandler: (s, e) => ({
        balance: s.balance + e.amount,
        eur: s.eur + (e.currency === "EUR" ? 1 : 0),
        usd: s.usd + (e.currency === "USD" ? 1 : 0),
      }),
      journal: store.journal,
      eventCodec: v2Events,
    });
  },
});

node.cluster.subscribe(
  (e) => {
    if (e.type === "member-up" && e.member.uniqueAddress.address.port === config.port)
      emit({ event: "up" });
  },
  { initialState: true },
);

// ---------------------------------------------------------------- the client's load
let mode: "deposit" | "credit" = "deposit";
let running = false;
let completed = 0;
let failed = 0;
let inFlight = 0;
const errors: string[] = [];
const acked = new Map<string, number>();
let seed = config.port;
/** A small deterministic generator: which wallet a worker addresses next. */
function nextWallet(): string {
  seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
  return `wallet-${seed % config.wallets}`;
}

async function worker(): Promise<void> {
  while (running) {
    const id = nextWallet();
    inFlight++;
    try {
      await sharding
        .entityRefFor(Wallet, id)
        .ask(
          (r: ActorRef<WalletView>): V2Msg =>
            mode === "deposit"
              ? { type: "deposit", amount: 1, replyTo: r }
              : { type: "credit", amount: 1, currency: "USD", replyTo: r },
          { timeoutMs: 15_000 },
        );
      completed++;
      acked.set(id, (acked.get(id) ?? 0) + 1);
    } catch (error) {
      failed++;
      if (errors.length < 10) errors.push(`${id}: ${String(error)}`);
    } finally {
      inFlight--;
    }
  }
}

async function drained(): Promise<void> {
  while (inFlight > 0) await new Promise((r) => setTimeout(r, 20));
}

type Command = Readonly<Record<string, unknown>> & { readonly cmd: string; readonly id: number };

async function handle(c: Command): Promise<Record<string, unknown>> {
  switch (c.cmd) {
    case "load":
      mode = c.mode === "credit" ? "credit" : "deposit";
      if (!running) {
        running = true;
        for (let i = 0; i < Number(c.workers ?? 8); i++) void worker();
      }
      return { mode };
    case "load-stats":
      return { completed, failed };
    case "stop-load":
      running = false;
      await drained();
      return { completed, failed, errors, acked: Object.fromEntries(acked) };
    case "wallets": {
      const n = Number(c.n ?? config.wallets);
      const ids = Array.from({ length: n }, (_, i) => `wallet-${i}`);
      const views = await Promise.all(
        ids.map((id) =>
          sharding
            .entityRefFor(Wallet, id)
            .ask((r: ActorRef<WalletView>): V2Msg => ({ type: "balance", replyTo: r }), {
              timeoutMs: 15_000,
            }),
        ),
      );
      return { wallets: Object.fromEntries(ids.map((id, i) => [id, views[i]])) };
    }
    case "versions":
      return {
        versions: node.cluster.state.members
          .filter((m) => m.status === "up")
          .map((m) => m.appVersion),
      };
    case "regions":
      return { regions: (await sharding.getCurrentRegions(Wallet)).length };
    case "shutdown":
      running = false;
      void node
        .shutdown("user")
        .then(() => store?.close())
        .then(
          () => {
            emit({ event: "shutdown-done" });
            process.exit(0);
          },
          (error: unknown) => {
            process.stderr.write(`shutdown failed: ${String(error)}\n`);
            process.exit(1);
          },
        );
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
