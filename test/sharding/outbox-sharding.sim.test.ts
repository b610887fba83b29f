/**
 * At-least-once delivery to sharded entities: an Outbox on node a whose destination is
 * a named sender function addressing entities through `entityRefFor`. Deliveries cross
 * the network to entities hosted on b (the `confirmTo` ref travels inside the message),
 * every first attempt is dropped by the entity, and still every order is handled and
 * confirmed; the entities deduplicate by (outboxId, deliveryId).
 */
import { describe, expect, it } from "vitest";
import {
  type ActorRef,
  Behaviors,
  type Delivery,
  type EventCodec,
  Outbox,
  type OutboxCommand,
  type OutboxEvent,
  type OutboxStatus,
} from "../../src/actor/index.js";
import { ClusterNode, ClusterSharding, EntityTypeKey } from "../../src/api/index.js";
import { MemoryJournal } from "../../src/persistence/memory/memory-journal.js";
import { SimNetwork, SimWorld } from "../../src/runtime/sim/index.js";
import { FAST } from "../cluster/sim-cluster.js";
import { simSeeds } from "../support/sim-seeds.js";

interface Order {
  readonly to: string;
  readonly n: number;
}
type Mailbox = { type: "deliver"; delivery: Delivery<Order> };
const MailboxKey = EntityTypeKey<Mailbox>("Mailbox");

const jsonCodec: EventCodec<OutboxEvent<Order>> = {
  encode: (v) => ({ serializerId: 100, bytes: new TextEncoder().encode(JSON.stringify(v)) }),
  decode: (_id, bytes) => JSON.parse(new TextDecoder().decode(bytes)) as OutboxEvent<Order>,
};

async function startNode(
  world: SimWorld,
  network: SimNetwork,
  name: string,
  handled: Map<string, { node: string; count: number }>,
): Promise<ClusterNode> {
  let node: ClusterNode | undefined;
  void ClusterNode.start({
    systemName: "shop",
    host: name,
    port: 2552,
    seedNodes: ["a:2552", "b:2552"],
    settings: FAST,
    failureDetector: { acceptableHeartbeatPauseMs: 1_000, firstHeartbeatEstimateMs: 200 },
    downing: { stableAfterMs: 2_000 },
    runtime: world.createRuntime(name),
    transport: network.transportFor(name),
  }).then((n) => {
    node = n;
  });
  await world.runUntil(() => node !== undefined, 5_000);
  const n = node as ClusterNode;
  ClusterSharding.get(n).init({
    typeKey: MailboxKey,
    numberOfShards: 10,
    createBehavior: () =>
      Behaviors.receiveMessage<Mailbox>(({ delivery: d }) => {
        if (d.attempt === 1) return; // every first attempt is lost
        const key = `${d.outboxId}#${d.deliveryId}`;
        const seen = handled.get(key);
        if (seen === undefined) handled.set(key, { node: name, count: 1 });
        else seen.count++; // a duplicate: deduplicated, confirmed again
        Outbox.confirm(d);
      }),
  });
  return n;
}

describe.each(simSeeds([1, 2]))("Outbox to sharded entities (seed %i)", (seed) => {
  it("every order reaches its entity at least once and is confirmed across nodes", async () => {
    const world = new SimWorld({ seed });
    const network = new SimNetwork(world);
    const handled = new Map<string, { node: string; count: number }>();
    const a = await startNode(world, network, "a", handled);
    const b = await startNode(world, network, "b", handled);
    const upBoth = () =>
      [a, b].every(
        (n) =>
          n.cluster.state.members.length === 2 &&
          n.cluster.state.members.every((m) => m.status === "up"),
      );
    expect(await world.runUntil(upBoth, 30_000), `[sim ${world.describe()}]`).toBe(true);
    await world.advance(5_000);

    const sharding = ClusterSharding.get(a);
    const box: ActorRef<OutboxCommand<Order>> = a.system.spawn(
      Outbox.behavior<Order>({
        persistenceId: "Outbox|orders",
        journal: new MemoryJournal(),
        eventCodec: jsonCodec,
        destinations: {
          mailbox: (d) =>
            sharding.entityRefFor(MailboxKey, d.payload.to).tell({ type: "deliver", delivery: d }),
        },
        settings: { redeliverIntervalMs: 200, redeliverBackoffMaxMs: 2_000 },
      }),
      "outbox",
    );
    const N = 30;
    for (let i = 0; i < N; i++)
      box.tell({ type: "send", destination: "mailbox", payload: { to: `m-${i % 10}`, n: i } });

    let status: OutboxStatus<Order> | undefined;
    const probe = a.system.spawn(
      Behaviors.receiveMessage<OutboxStatus<Order>>((s) => {
        status = s;
      }),
    );
    const allConfirmed = async () => {
      status = undefined;
      box.tell({ type: "status", replyTo: probe });
      await world.runUntil(() => status !== undefined, 1_000);
      const st = status as OutboxStatus<Order> | undefined; // set by the probe meanwhile
      return st?.nextDeliveryId === N + 1 && st.unconfirmed.length === 0;
    };
    let done = false;
    for (let i = 0; i < 60 && !done; i++) {
      await world.advance(500);
      done = await allConfirmed();
    }
    expect(done, `[sim ${world.describe()}] all confirmed`).toBe(true);
    expect(handled.size).toBe(N);
    // Some entities live on b: their deliveries and confirmations crossed the network.
    expect(new Set([...handled.values()].map((h) => h.node))).toEqual(new Set(["a", "b"]));
  });
});
