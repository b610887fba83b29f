/**
 * At-least-once delivery with the Outbox on SQLite: `npx tsx examples/outbox-demo.ts`.
 * (test/examples/examples.test.ts runs it.)
 *
 * Run 1: 20 messages go to an "audit" actor whose downstream is broken for every third
 * message (those deliveries are lost, again and again); the process "crashes" (the actor
 * system and the database connection go away) with them unconfirmed. Run 2: a new system on the same file recovers the outbox, which
 * redelivers them; this time the audit actor confirms everything.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type ActorRef,
  ActorSystem,
  ask,
  Behaviors,
  createNodeRuntime,
  type Delivery,
  type EventCodec,
  Outbox,
  type OutboxCommand,
  type OutboxEvent,
  type OutboxSendReply,
  type OutboxSnapshot,
  type OutboxStatus,
} from "../src/index.js";
import { sqlitePersistence } from "../src/persistence/sqlite/index.js";

type AuditRecord = { user: string; action: string };

// Any codec for plain data works; JSON keeps the example short.
function json<T>(serializerId: number): EventCodec<T> {
  return {
    encode: (v) => ({ serializerId, bytes: new TextEncoder().encode(JSON.stringify(v)) }),
    decode: (_id, bytes) => JSON.parse(new TextDecoder().decode(bytes)) as T,
  };
}

const dir = mkdtempSync(join(tmpdir(), "shardkit-outbox-demo-"));
const path = join(dir, "outbox.db");

async function run(name: string, lossy: boolean) {
  const store = sqlitePersistence({ path });
  const system = ActorSystem.create({
    name,
    runtime: createNodeRuntime({ logLevel: "error" }),
  });
  const seen = new Set<number>();
  let deliveries = 0;
  let dropped = 0;
  const audit = system.spawn(
    Behaviors.receiveMessage<Delivery<AuditRecord>>((d) => {
      deliveries++;
      if (lossy && d.deliveryId % 3 === 0) {
        dropped++;
        return; // lost on the way
      }
      seen.add(d.deliveryId); // idempotent: a duplicate is recorded once
      Outbox.confirm(d);
    }),
    "audit",
  );
  const outbox: ActorRef<OutboxCommand<AuditRecord>> = system.spawn(
    Outbox.behavior<AuditRecord>({
      persistenceId: "Outbox|audit",
      journal: store.journal,
      eventCodec: json<OutboxEvent<AuditRecord>>(100),
      snapshots: store.snapshots,
      snapshotCodec: json<OutboxSnapshot<AuditRecord>>(101),
      snapshotAfter: 10,
      destinations: { audit: (d) => audit.tell(d) },
      timestampMs: () => Date.now(),
      settings: { redeliverIntervalMs: 50, redeliverBackoffMaxMs: 400 },
    }),
    "outbox",
  );
  const status = () =>
    ask(outbox, (replyTo: ActorRef<OutboxStatus<AuditRecord>>) => ({ type: "status", replyTo }), {
      timeoutMs: 5_000,
    });
  const stop = async () => {
    await system.terminate();
    await store.close();
  };
  return { outbox, status, stop, stats: () => ({ deliveries, dropped, seen: seen.size }) };
}

try {
  // Run 1: send, let a few redeliveries happen, then go away with messages unconfirmed.
  const first = await run("first", true);
  for (let i = 1; i <= 20; i++) {
    const reply = await ask(
      first.outbox,
      (replyTo: ActorRef<OutboxSendReply>) => ({
        type: "send",
        destination: "audit",
        payload: { user: `u${i}`, action: "login" },
        replyTo,
      }),
      { timeoutMs: 5_000 },
    );
    if (reply.type !== "accepted") throw new Error(`rejected: ${JSON.stringify(reply)}`);
  }
  const deadline1 = Date.now() + 10_000;
  let left = (await first.status()).unconfirmed.length;
  while (left !== 6) {
    if (Date.now() > deadline1) throw new Error(`expected 6 unconfirmed, have ${left}`);
    await new Promise((r) => setTimeout(r, 20));
    left = (await first.status()).unconfirmed.length;
  }
  const s1 = first.stats();
  console.log(
    `run 1: 20 sent, ${s1.deliveries} deliveries, ${s1.dropped} lost, ${left} unconfirmed at the crash`,
  );
  await first.stop();

  // Run 2: recovery finds the unconfirmed messages and redelivers them.
  const second = await run("second", false);
  const deadline = Date.now() + 10_000;
  while ((await second.status()).unconfirmed.length > 0) {
    if (Date.now() > deadline) throw new Error("messages still unconfirmed after 10 s");
    await new Promise((r) => setTimeout(r, 20));
  }
  const s2 = second.stats();
  console.log(`run 2: recovered, ${s2.deliveries} redeliveries, all 20 confirmed`);
  await second.stop();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
