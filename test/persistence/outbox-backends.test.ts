/**
 * The Outbox against the real stores: memory, SQLite and PostgreSQL (when
 * SHARDKIT_PG_URL is set; else a SKIP line). Messages left unconfirmed when the outbox
 * (its whole actor system, and its store connection) goes away are redelivered by the
 * next incarnation; confirmed ones are not. Events and snapshots go through the
 * msgpack SerializerRegistry, as in a real node. Runs on the node runtime (real time).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ActorRef,
  ActorSystem,
  ask,
  Behaviors,
  type Delivery,
  type EventCodec,
  Outbox,
  type OutboxCommand,
  type OutboxEvent,
  type OutboxSendReply,
  type OutboxSnapshot,
  type OutboxStatus,
} from "../../src/actor/index.js";
import { SerializerRegistry } from "../../src/protocol/index.js";
import { createNodeRuntime } from "../../src/runtime/node/index.js";
import { type Backend, type Opened, persistenceBackends } from "./journal-backends.js";

const registry = new SerializerRegistry();
function registryCodec<T>(): EventCodec<T> {
  return {
    encode: (v) => {
      const { serializerId, bytes } = registry.serialize(v);
      return { serializerId, bytes };
    },
    decode: (id, bytes) => registry.deserialize(id, bytes) as T,
  };
}

async function waitFor(
  what: string,
  predicate: () => boolean | Promise<boolean>,
  limitMs = 15_000,
) {
  const deadline = performance.now() + limitMs;
  while (!(await predicate())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

interface Incarnation {
  system: ActorSystem;
  store: Opened;
  box: ActorRef<OutboxCommand<string>>;
  received: Delivery<string>[];
  stop(): Promise<void>;
}

/** An actor system with an outbox on `store`; the destination confirms when `confirm` says so. */
function start(
  backend: Backend,
  pid: string,
  name: string,
  confirm: (payload: string) => boolean,
): Incarnation {
  const store = backend.open();
  const system = ActorSystem.create({ name, runtime: createNodeRuntime({ logLevel: "off" }) });
  const received: Delivery<string>[] = [];
  const dest = system.spawn(
    Behaviors.receiveMessage<Delivery<string>>((d) => {
      received.push(d);
      if (confirm(d.payload)) Outbox.confirm(d);
    }),
    "destination",
  );
  const box = system.spawn(
    Outbox.behavior<string>({
      persistenceId: pid,
      journal: store.journal,
      eventCodec: registryCodec<OutboxEvent<string>>(),
      snapshots: store.snapshots,
      snapshotCodec: registryCodec<OutboxSnapshot<string>>(),
      snapshotAfter: 4,
      destinations: { orders: (d) => dest.tell(d) },
      timestampMs: () => Date.now(),
      settings: { redeliverIntervalMs: 20, redeliverBackoffMaxMs: 200 },
    }),
    "outbox",
  );
  return {
    system,
    store,
    box,
    received,
    async stop() {
      await system.terminate();
      await store.close();
    },
  };
}

const status = (box: ActorRef<OutboxCommand<string>>) =>
  ask(box, (replyTo: ActorRef<OutboxStatus<string>>) => ({ type: "status", replyTo }), {
    timeoutMs: 10_000,
  });

describe.each(persistenceBackends("outbox"))("Outbox on %s", (backendName, make) => {
  let backend: Backend;
  let running: Incarnation | undefined;
  beforeAll(() => {
    backend = make();
  });
  afterAll(async () => {
    await running?.stop();
    await backend.teardown();
  });

  it("redelivers unconfirmed messages after the outbox restarts; never confirmed ones", async () => {
    const pid = `Outbox|restart-${backendName}`;
    const even = (p: string) => Number(p.slice(1)) % 2 === 0;

    // 1. Ten messages; the destination confirms only the even ones, then everything stops.
    running = start(backend, pid, "first", even);
    const first = running;
    const replies: OutboxSendReply[] = [];
    for (let i = 0; i < 10; i++)
      replies.push(
        await ask(
          first.box,
          (replyTo: ActorRef<OutboxSendReply>) => ({
            type: "send",
            destination: "orders",
            payload: `m${i}`,
            replyTo,
          }),
          { timeoutMs: 10_000 },
        ),
      );
    expect(replies).toEqual(
      Array.from({ length: 10 }, (_, i) => ({ type: "accepted", deliveryId: i + 1 })),
    );
    await waitFor("5 unconfirmed", async () => (await status(first.box)).unconfirmed.length === 5);
    // The odd ones were redelivered at least once before the stop.
    await waitFor("a redelivery", () => first.received.some((d) => d.attempt >= 2));
    await first.stop();
    running = undefined;
    const opened = backend.open();
    expect(await opened.journal.highestSequenceNr(pid)).toBe(15); // 10 sent + 5 confirmed
    expect((await opened.snapshots.loadLatest(pid))?.sequenceNr).toBe(12);
    await opened.close();

    // 2. A new system and store connection: recovery (snapshot + events) redelivers the
    //    odd ones; this destination confirms everything.
    running = start(backend, pid, "second", () => true);
    const second = running;
    await waitFor("all confirmed", async () => (await status(second.box)).unconfirmed.length === 0);
    const payloads = [...new Set(second.received.map((d) => d.payload))].sort();
    expect(payloads).toEqual(["m1", "m3", "m5", "m7", "m9"]);
    // The same deliveryIds as before the restart (m<i> got i + 1).
    for (const d of second.received) expect(d.deliveryId).toBe(Number(d.payload.slice(1)) + 1);
    await second.stop();
    running = undefined;

    // 3. Everything was confirmed: a third incarnation delivers nothing.
    running = start(backend, pid, "third", () => true);
    const third = running;
    const st = await status(third.box);
    expect(st.unconfirmed).toEqual([]);
    expect(st.nextDeliveryId).toBe(11);
    await new Promise((r) => setTimeout(r, 300)); // > 10 redelivery intervals
    expect(third.received).toEqual([]);
    await third.stop();
    running = undefined;
  });
});
