/**
 * The README's persistent sharding example, kept runnable:
 * `npx tsx examples/readme-persistence.ts [port]`. An event-sourced cart on SQLite with
 * the coordinator state and remembered entities in the same file: the node is stopped and
 * started again on the file, and the cart is running again (remembered) with its items.
 * (test/examples/examples.test.ts runs it.)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type ActorRef,
  ClusterNode,
  ClusterSharding,
  Effect,
  EntityTypeKey,
  EventSourcedBehavior,
  msgpackCodec,
  persistenceIdOf,
} from "../src/index.js";
import { type SqlitePersistence, sqlitePersistence } from "../src/persistence/sqlite/index.js";

type Cart = { type: "add"; sku: string } | { type: "get"; replyTo: ActorRef<string[]> };
type Added = { type: "added"; sku: string };
const CartKey = EntityTypeKey<Cart>("Cart");
const Eff = Effect.of<Added, string[]>();

const cartBehavior = (cartId: string, store: SqlitePersistence, started: Set<string>) => {
  started.add(cartId);
  return EventSourcedBehavior.create<Cart, Added, string[]>({
    persistenceId: persistenceIdOf(CartKey.name, cartId), // "Cart|<cartId>"
    emptyState: [],
    commandHandler: (items, cmd) =>
      cmd.type === "add"
        ? Eff.persist({ type: "added", sku: cmd.sku })
        : Eff.reply(cmd.replyTo, items),
    eventHandler: (items, e) => [...items, e.sku],
    journal: store.journal,
    eventCodec: msgpackCodec<Added>(),
  });
};

const port = Number(process.argv[2] ?? 2552);
const dir = mkdtempSync(join(tmpdir(), "shardkit-readme-"));

async function run(round: number): Promise<void> {
  const store = sqlitePersistence({ path: join(dir, "shop.db") });
  const node = await ClusterNode.start({
    systemName: "shop",
    port,
    seedNodes: [`127.0.0.1:${port}`],
    settings: { periodicTasksInitialDelayMs: 0, seedNodeTimeoutMs: 500 },
  });
  const started = new Set<string>();
  const sharding = ClusterSharding.get(node);
  sharding.init({
    typeKey: CartKey,
    createBehavior: ({ entityId }) => cartBehavior(entityId, store, started),
    persistence: { journal: store.journal, snapshots: store.snapshots }, // sharding's own data
    rememberEntities: true,
  });
  const cart = sharding.entityRefFor(CartKey, "cart-42");
  if (round === 1) {
    cart.tell({ type: "add", sku: "tea" });
    cart.tell({ type: "add", sku: "scones" });
  } else {
    // No message yet: the cart runs again because it is remembered.
    while (!started.has("cart-42")) await new Promise((r) => setTimeout(r, 50));
    console.log("round 2: cart-42 restarted without a message (remembered)");
  }
  const items = await cart.ask((replyTo: ActorRef<string[]>) => ({ type: "get", replyTo }), {
    timeoutMs: 10_000,
  });
  console.log(`round ${round}: ${items.join(", ")}`);
  await node.shutdown("done");
  await store.close();
}

try {
  await run(1);
  await run(2);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
