/**
 * The Outbox actor in the simulator: persistence before delivery and reply, redelivery
 * with backoff to a lossy destination until confirmed, the unconfirmed bound, warnings,
 * the burst bound, and redelivery after the outbox restarts (memory journal; the SQL
 * backends are in outbox-backends.test.ts).
 */
import { describe, expect, it } from "vitest";
import type { ActorFailed } from "../../src/actor/event-stream.js";
import {
  type ActorRef,
  Behaviors,
  ConfigError,
  type Delivery,
  type EventCodec,
  EventSourcedPersistError,
  Outbox,
  type OutboxCommand,
  type OutboxEvent,
  type OutboxOptions,
  type OutboxSendReply,
  type OutboxSnapshot,
  type OutboxStatus,
  type OutboxUnconfirmedWarning,
} from "../../src/actor/index.js";
import { MemoryJournal } from "../../src/persistence/memory/memory-journal.js";
import { MemorySnapshotStore } from "../../src/persistence/memory/memory-snapshot-store.js";
import { type Journal, PersistenceStoreError } from "../../src/ports/journal.js";
import { simSeeds } from "../support/sim-seeds.js";
import { type SimSystem, simSystem } from "./sim-system.js";

function jsonCodec<T>(serializerId = 9): EventCodec<T> {
  return {
    encode: (v) => ({ serializerId, bytes: new TextEncoder().encode(JSON.stringify(v)) }),
    decode: (_id, bytes) => JSON.parse(new TextDecoder().decode(bytes)) as T,
  };
}

const PID = "Outbox|orders";
const FAST = {
  redeliverIntervalMs: 100,
  redeliverBackoffFactor: 2,
  redeliverBackoffMaxMs: 800,
} as const;

/** A destination actor; `policy` decides per delivery whether it is handled and confirmed. */
function destination(
  s: SimSystem,
  policy: (d: Delivery<string>) => "confirm" | "drop" | "ignore-confirm",
) {
  const received: { d: Delivery<string>; at: number }[] = [];
  const handled = new Set<string>();
  const ref = s.system.spawn(
    Behaviors.receiveMessage<Delivery<string>>((d) => {
      received.push({ d, at: s.world.now });
      const what = policy(d);
      if (what === "drop") return; // lost before it was handled
      handled.add(d.payload);
      if (what === "confirm") Outbox.confirm(d);
    }),
  );
  return { ref, received, handled };
}

function outbox(
  journal: Journal,
  to: ActorRef<Delivery<string>>,
  extra: Partial<OutboxOptions<string>> = {},
) {
  return Outbox.behavior<string>({
    persistenceId: PID,
    journal,
    eventCodec: jsonCodec<OutboxEvent<string>>(),
    destinations: { orders: (d) => to.tell(d) },
    backoff: { minBackoffMs: 50, maxBackoffMs: 500, randomFactor: 0 },
    ...extra,
    settings: { ...FAST, ...extra.settings },
  });
}

function replies(s: SimSystem) {
  const got: OutboxSendReply[] = [];
  const ref = s.system.spawn(Behaviors.receiveMessage<OutboxSendReply>((r) => void got.push(r)));
  return { got, ref };
}

async function status(s: SimSystem, box: ActorRef<OutboxCommand<string>>) {
  let st: OutboxStatus<string> | undefined;
  const ref = s.system.spawn(
    Behaviors.receiveMessage<OutboxStatus<string>>((r) => {
      st = r;
      return Behaviors.stopped;
    }),
  );
  box.tell({ type: "status", replyTo: ref });
  await s.until(() => st !== undefined);
  return st as OutboxStatus<string>;
}

const send = (payload: string, replyTo?: ActorRef<OutboxSendReply>): OutboxCommand<string> =>
  replyTo === undefined
    ? { type: "send", destination: "orders", payload }
    : { type: "send", destination: "orders", payload, replyTo };

/** A journal whose appends wait for release() while gated. */
class GatedJournal extends MemoryJournal {
  gate = false;
  private waiting: (() => void)[] = [];
  release(): void {
    const w = this.waiting;
    this.waiting = [];
    for (const f of w) f();
  }
  override async append(...args: Parameters<Journal["append"]>): Promise<void> {
    if (this.gate) await new Promise<void>((r) => this.waiting.push(r));
    return super.append(...args);
  }
}

/** Records where each read started (to see that recovery starts after the snapshot). */
class ReadRecordingJournal extends MemoryJournal {
  readonly readsFrom: number[] = [];
  override read(...args: Parameters<Journal["read"]>) {
    this.readsFrom.push(args[1]);
    return super.read(...args);
  }
}

/** Fails the next append with a store error when `failNext` is set. */
class FailingJournal extends MemoryJournal {
  failNext = false;
  override async append(...args: Parameters<Journal["append"]>): Promise<void> {
    if (this.failNext) {
      this.failNext = false;
      throw new PersistenceStoreError("append", args[0], new Error("disk on fire"));
    }
    return super.append(...args);
  }
}

describe("Outbox actor (simulator)", () => {
  it("persists before the first delivery and before the reply; confirm stops redelivery", async () => {
    const s = simSystem(1);
    const journal = new GatedJournal();
    journal.gate = true;
    const dest = destination(s, () => "confirm");
    const r = replies(s);
    const box = s.system.spawn(outbox(journal, dest.ref), "outbox");
    box.tell(send("a", r.ref));
    await s.settle(1_000);
    expect(dest.received).toEqual([]); // the "sent" event is not durable yet
    expect(r.got).toEqual([]);
    expect(await journal.highestSequenceNr(PID)).toBe(0);
    journal.gate = false;
    journal.release();
    await s.until(() => r.got.length === 1 && dest.received.length === 1);
    expect(r.got[0]).toEqual({ type: "accepted", deliveryId: 1 });
    const d = (dest.received[0] as { d: Delivery<string> }).d;
    expect(d).toMatchObject({
      outboxId: PID,
      deliveryId: 1,
      destination: "orders",
      payload: "a",
      attempt: 1,
    });
    expect(d.confirmTo).toBe(box);
    await s.settle(10_000);
    expect(dest.received.length).toBe(1); // confirmed: never again
    expect((await status(s, box)).unconfirmed).toEqual([]);
    expect(await journal.highestSequenceNr(PID)).toBe(2); // sent + confirmed
    // A duplicate confirm persists nothing.
    box.tell({ type: "confirm", deliveryId: 1 });
    await s.settle(100);
    expect(await journal.highestSequenceNr(PID)).toBe(2);
  });

  it("redelivers with exponential backoff until confirmed", async () => {
    const s = simSystem(2);
    let confirmAt = 5;
    const dest = destination(s, (d) => (d.attempt >= confirmAt ? "confirm" : "drop"));
    const box = s.system.spawn(outbox(new MemoryJournal(), dest.ref), "outbox");
    box.tell(send("a"));
    await s.until(() => dest.handled.has("a"));
    const at = dest.received.map((x) => x.at);
    const gaps = at.slice(1).map((t, i) => t - (at[i] as number));
    expect(dest.received.map((x) => x.d.attempt)).toEqual([1, 2, 3, 4, 5]);
    // 100, 200, 400, 800 (virtual ms; the timer may add up to 1 ms of rounding)
    for (const [i, want] of [100, 200, 400, 800].entries()) {
      expect(gaps[i]).toBeGreaterThanOrEqual(want);
      expect(gaps[i]).toBeLessThanOrEqual(want + 2);
    }
    confirmAt = 0;
    await s.settle(20_000);
    expect(dest.received.length).toBe(5);
  });

  for (const seed of simSeeds([11, 12, 13])) {
    it(`a lossy destination gets every message at least once (seed ${seed})`, async () => {
      const s = simSystem(seed);
      const rnd = s.world.random;
      // 40% of deliveries are lost; 30% of the handled ones lose their confirmation.
      const dest = destination(s, () => {
        const x = rnd.next();
        return x < 0.4 ? "drop" : x < 0.58 ? "ignore-confirm" : "confirm";
      });
      const r = replies(s);
      const journal = new MemoryJournal();
      const box = s.system.spawn(
        outbox(journal, dest.ref, { settings: { redeliveryBurstMax: 5 } }),
        "outbox",
      );
      const N = 60;
      for (let i = 0; i < N; i++) box.tell(send(`m${i}`, r.ref));
      await s.until(() => r.got.length === N, 60_000);
      expect(r.got.map((x) => (x.type === "accepted" ? x.deliveryId : -1))).toEqual(
        Array.from({ length: N }, (_, i) => i + 1),
      );
      let done = false;
      const poll = async () => {
        done = (await status(s, box)).unconfirmed.length === 0;
      };
      for (let i = 0; i < 100 && !done; i++) {
        await s.settle(1_000);
        await poll();
      }
      expect(done, `[sim ${s.world.describe()}] all confirmed`).toBe(true);
      expect([...dest.handled].sort()).toEqual(Array.from({ length: N }, (_, i) => `m${i}`).sort());
      // Lossy means duplicates happened (the test would be vacuous otherwise).
      expect(dest.received.length, `[sim ${s.world.describe()}]`).toBeGreaterThan(N);
      // Confirmed: nothing more arrives, however long we wait.
      const count = dest.received.length;
      await s.settle(30_000);
      expect(dest.received.length, `[sim ${s.world.describe()}]`).toBe(count);
      // ... and the outbox is idle: no redelivery timer left behind.
      expect(s.world.pendingEvents, `[sim ${s.world.describe()}]`).toBe(0);
      // Every event is in the journal: N sent + N confirmed.
      expect(await journal.highestSequenceNr(PID)).toBe(2 * N);
    });
  }

  it("rejects sends beyond unconfirmedMax (typed) and to unknown destinations", async () => {
    const s = simSystem(3);
    const dest = destination(s, () => "drop");
    const r = replies(s);
    const journal = new MemoryJournal();
    const box = s.system.spawn(
      outbox(journal, dest.ref, { settings: { unconfirmedMax: 3 } }),
      "outbox",
    );
    for (const p of ["a", "b", "c", "d"]) box.tell(send(p, r.ref));
    box.tell({ type: "send", destination: "nowhere", payload: "x", replyTo: r.ref });
    await s.until(() => r.got.length === 5);
    expect(r.got).toEqual([
      { type: "accepted", deliveryId: 1 },
      { type: "accepted", deliveryId: 2 },
      { type: "accepted", deliveryId: 3 },
      { type: "rejected", reason: "unconfirmed-max", unconfirmed: 3, unconfirmedMax: 3 },
      { type: "rejected", reason: "unknown-destination", destination: "nowhere" },
    ]);
    expect(await journal.highestSequenceNr(PID)).toBe(3); // rejections persist nothing
    box.tell({ type: "confirm", deliveryId: 2 });
    box.tell(send("e", r.ref));
    await s.until(() => r.got.length === 6);
    expect(r.got[5]).toEqual({ type: "accepted", deliveryId: 4 });
    expect(dest.received.some((x) => x.d.payload === "d")).toBe(false);
  });

  it("warns once per message after warnAfterAttempts attempts (event stream + log)", async () => {
    const s = simSystem(4, undefined, "test", { keepTrace: true });
    const warnings: OutboxUnconfirmedWarning[] = [];
    s.system.eventStream.subscribe("OutboxUnconfirmedWarning", (e) =>
      warnings.push(e as OutboxUnconfirmedWarning),
    );
    const dest = destination(s, () => "drop");
    const box = s.system.spawn(
      outbox(new MemoryJournal(), dest.ref, { settings: { warnAfterAttempts: 3 } }),
      "outbox",
    );
    box.tell(send("a"));
    box.tell(send("b"));
    await s.settle(20_000);
    expect(dest.received.length).toBeGreaterThan(8);
    expect(warnings.map((w) => w.deliveries.map((d) => d.deliveryId))).toEqual([[1, 2]]);
    expect(warnings[0]).toEqual({
      type: "OutboxUnconfirmedWarning",
      persistenceId: PID,
      deliveries: [
        { deliveryId: 1, destination: "orders", attempts: 3 },
        { deliveryId: 2, destination: "orders", attempts: 3 },
      ],
    });
    const logs = s.world.trace.filter(
      (e) => e.kind === "log" && String(e.detail).includes("outbox messages still unconfirmed"),
    );
    expect(logs.length).toBe(1);
  });

  it("after a restart, redelivers every unconfirmed message (burst-bounded), never a confirmed one", async () => {
    const s = simSystem(5);
    const journal = new ReadRecordingJournal();
    const snapshots = new MemorySnapshotStore();
    const codecs = {
      snapshots,
      snapshotCodec: jsonCodec<OutboxSnapshot<string>>(10),
      snapshotAfter: 4,
    };
    // First incarnation: only even-numbered messages are confirmed.
    const dest1 = destination(s, (d) =>
      Number(d.payload.slice(1)) % 2 === 0 ? "confirm" : "drop",
    );
    const r = replies(s);
    const first = s.system.spawn(outbox(journal, dest1.ref, codecs), "outbox-1");
    for (let i = 0; i < 10; i++) first.tell(send(`m${i}`, r.ref));
    await s.until(() => r.got.length === 10);
    await s.until(() => dest1.handled.size === 5);
    await s.settle(50); // the confirms are persisted
    expect((await status(s, first)).unconfirmed.map((e) => e.payload)).toEqual([
      "m1",
      "m3",
      "m5",
      "m7",
      "m9",
    ]);
    s.system.stop(first);
    await s.settle(10);
    const snap = await snapshots.loadLatest(PID);
    expect(snap?.sequenceNr).toBe(12); // 10 sent + 5 confirmed = 15 events; every 4th
    journal.readsFrom.length = 0;

    // Second incarnation (a new actor, same persistenceId): recovers and redelivers,
    // at most 2 per tick.
    const dest2 = destination(s, () => "confirm");
    const second = s.system.spawn(
      outbox(journal, dest2.ref, { ...codecs, settings: { redeliveryBurstMax: 2 } }),
      "outbox-2",
    );
    await s.until(() => dest2.received.length >= 2);
    // Recovery replayed only the events after the snapshot.
    expect(journal.readsFrom).toEqual([13]);
    const t0 = dest2.received[0]?.at as number;
    expect(dest2.received.filter((x) => x.at === t0).length).toBe(2); // the burst bound
    await s.until(() => dest2.handled.size === 5);
    expect([...dest2.handled].sort()).toEqual(["m1", "m3", "m5", "m7", "m9"]);
    const ts = [...new Set(dest2.received.map((x) => x.at))];
    expect(ts.length).toBe(3); // 2 + 2 + 1, one interval apart
    expect((ts[1] as number) - (ts[0] as number)).toBeGreaterThanOrEqual(100);
    await s.settle(100);
    expect((await status(s, second)).unconfirmed).toEqual([]);
    // New ids continue after the recovered ones.
    second.tell(send("n", r.ref));
    await s.until(() => r.got.length === 11);
    expect(r.got[10]).toEqual({ type: "accepted", deliveryId: 11 });

    // Third incarnation: everything was confirmed; nothing is delivered again.
    await s.settle(100);
    s.system.stop(second);
    await s.settle(10);
    const dest3 = destination(s, () => "confirm");
    const third = s.system.spawn(outbox(journal, dest3.ref, codecs), "outbox-3");
    expect((await status(s, third)).nextDeliveryId).toBe(12);
    await s.settle(10_000);
    expect(dest3.received).toEqual([]);
  });

  it("a failed append restarts the outbox: no reply for that send, earlier messages redelivered", async () => {
    const s = simSystem(6);
    const failed: ActorFailed[] = [];
    s.system.eventStream.subscribe("ActorFailed", (e) => failed.push(e));
    const journal = new FailingJournal();
    const dest = destination(s, (d) => (d.payload === "a" && d.attempt === 1 ? "drop" : "confirm"));
    const r = replies(s);
    const box = s.system.spawn(outbox(journal, dest.ref), "outbox");
    box.tell(send("a", r.ref));
    await s.until(() => r.got.length === 1);
    journal.failNext = true;
    box.tell(send("b", r.ref));
    await s.until(() => failed.length === 1);
    expect(failed[0]?.error).toBeInstanceOf(EventSourcedPersistError);
    expect(failed[0]?.directive).toBe("restart");
    box.tell(send("c", r.ref)); // handled after the restart and recovery
    await s.until(() => dest.handled.has("a") && dest.handled.has("c"));
    await s.settle(1_000);
    // b was never stored: no reply, never delivered; c got the id b would have had.
    expect(r.got).toEqual([
      { type: "accepted", deliveryId: 1 },
      { type: "accepted", deliveryId: 2 },
    ]);
    expect(dest.received.map((x) => x.d.payload)).not.toContain("b");
    expect((await status(s, box)).unconfirmed).toEqual([]);
  });

  it("a destination function that throws is a lost attempt: retried, the outbox keeps running", async () => {
    const s = simSystem(7);
    const failed: ActorFailed[] = [];
    s.system.eventStream.subscribe("ActorFailed", (e) => failed.push(e));
    const got: Delivery<string>[] = [];
    const to = s.system.spawn(
      Behaviors.receiveMessage<Delivery<string>>((d) => {
        got.push(d);
        Outbox.confirm(d);
      }),
    );
    const box = s.system.spawn(
      outbox(new MemoryJournal(), to, {
        destinations: {
          orders: (d) => {
            if (d.attempt < 3) throw new Error("transport down");
            to.tell(d);
          },
        },
      }),
      "outbox",
    );
    box.tell(send("a"));
    await s.until(() => got.length === 1);
    expect(got[0]?.attempt).toBe(3);
    await s.settle(10_000);
    expect(got.length).toBe(1);
    expect(failed).toEqual([]);
  });

  it("validates its options with ConfigError", () => {
    const j = new MemoryJournal();
    const base = {
      persistenceId: PID,
      journal: j,
      eventCodec: jsonCodec<OutboxEvent<string>>(),
      destinations: { a: () => undefined },
    };
    const bad: [Partial<OutboxOptions<string>>, string][] = [
      [{ destinations: {} }, "destinations"],
      [{ destinations: { a: 5 as unknown as () => void } }, "destinations.a"],
      [{ persistenceId: "" }, "persistenceId"],
      [{ snapshotAfter: 10 }, "snapshotAfter"],
      [{ settings: { redeliverIntervalMs: -1 } }, "outbox.redeliverIntervalMs"],
    ];
    for (const [o, key] of bad) {
      let err: unknown;
      try {
        Outbox.behavior<string>({ ...base, ...o });
      } catch (e) {
        err = e;
      }
      expect(err, key).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).key).toBe(key);
    }
  });
});
