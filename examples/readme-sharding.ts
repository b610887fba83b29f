/**
 * The README's sharding example, kept runnable: `npx tsx examples/readme-sharding.ts [port]`.
 * (test/examples/examples.test.ts runs it.)
 */
import {
  type ActorRef,
  Behaviors,
  ClusterNode,
  ClusterSharding,
  EntityTypeKey,
} from "../src/index.js";

type Cart = { type: "add"; sku: string } | { type: "get"; replyTo: ActorRef<string[]> };
const CartKey = EntityTypeKey<Cart>("Cart");

const cartBehavior = (_cartId: string) =>
  Behaviors.setup<Cart>(() => {
    const items: string[] = [];
    return Behaviors.receiveMessage<Cart>((msg) => {
      if (msg.type === "add") items.push(msg.sku);
      else msg.replyTo.tell([...items]);
    });
  });

const port = Number(process.argv[2] ?? 2552);
const node = await ClusterNode.start({
  systemName: "shop",
  port,
  seedNodes: [`127.0.0.1:${port}`],
  settings: { periodicTasksInitialDelayMs: 0, seedNodeTimeoutMs: 500 },
});
const sharding = ClusterSharding.get(node);
sharding.init({ typeKey: CartKey, createBehavior: ({ entityId }) => cartBehavior(entityId) });

const cart = sharding.entityRefFor(CartKey, "cart-42");
cart.tell({ type: "add", sku: "tea" });
cart.tell({ type: "add", sku: "scones" });
const items = await cart.ask((replyTo: ActorRef<string[]>) => ({ type: "get", replyTo }), {
  timeoutMs: 10_000,
});
console.log(items.join(", "));
await node.shutdown("done");
