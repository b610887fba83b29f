import { describe, expect, it } from "vitest";
import type { ActorFailed } from "../../src/actor/event-stream.js";
import {
  type ActorRef,
  Behaviors,
  Effect,
  type EventCodec,
  EventSourcedBehavior,
  type EventSourcedOptions,
  EventSourcedPersistError,
  EventSourcedRecoveryError,
  parsePersistenceId,
  persistenceIdOf,
} from "../../src/actor/index.js";
import { ConfigError, StashOverflowError } from "../../src/base/errors.js";
import { MemoryJournal } from "../../src/persistence/memory/memory-journal.js";
import { MemorySnapshotStore } from "../../src/persistence/memory/memory-snapshot-store.js";
import {
  FencedWriteError,
  type Journal,
  JournalConflictError,
  PersistenceStoreError,
} from "../../src/ports/journal.js";
import { JournalWrapper } from "../support/journal-wrapper.js";
import { type SimSystem, simSystem } from "./sim-system.js";

// ------------------------------------------------------------------ a counter entity

type Cmd =
  | { type: "add"; n: number; replyTo: ActorRef<number> }
  | { type: "addTwice"; n: number; replyTo: ActorRef<number> }
  | { type: "get"; replyTo: ActorRef<number> }
  | { type: "noop" }
  | { type: "hold" }
  | { type: "release"; replyTo: ActorRef<number> }
  | { type: "stop"; replyTo: ActorRef<number> }
  | { type: "unknown" };
type Ev = { type: "added"; n: number };
type St = { total: number };

const Eff = Effect.of<Ev, St>();

function jsonCodec<T>(serializerId = 7): EventCodec<T> {
  return {
    encode: (v) => ({ serializerId, bytes: new TextEncoder().encode(JSON.stringify(v)) }),
    decode: (id, bytes) => {
      expect(id).toBe(serializerId);
      return JSON.parse(new TextDecoder().decode(bytes)) as T;
    },
  };
}

function counter(
  journal: Journal,
  extra: Partial<EventSourcedOptions<Cmd, Ev, St>> = {},
  id = "c1",
) {
  return EventSourcedBehavior.create<Cmd, Ev, St>({
    persistenceId: persistenceIdOf("Counter", id),
    emptyState: { total: 0 },
    commandHandler: (state, cmd) => {
      switch (cmd.type) {
        case "add":
          return Eff.persist({ type: "added", n: cmd.n }).thenReply(cmd.replyTo, (s) => s.total);
        case "addTwice":
          return Eff.persist([
            { type: "added", n: cmd.n },
            { type: "added", n: cmd.n },
          ]).thenReply(cmd.replyTo, (s) => s.total);
        case "get":
          return Eff.reply(cmd.replyTo, state.total);
        case "noop":
          return Eff.none();
        case "hold":
          return Eff.stash();
        case "release":
          return Eff.persist({ type: "added", n: 100 })
            .thenUnstashAll()
            .thenReply(cmd.replyTo, (s) => s.total);
        case "stop":
          return Eff.reply(cmd.replyTo, -1).thenStop();
        case "unknown":
          return Eff.unhandled();
      }
    },
    eventHandler: (state, ev) => ({ total: state.total + ev.n }),
    journal,
    eventCodec: jsonCodec<Ev>(),
    backoff: { minBackoffMs: 100, maxBackoffMs: 1_000, randomFactor: 0 },
    ...extra,
  });
}

function collector(s: SimSystem) {
  const got: number[] = [];
  return { got, ref: s.system.spawn(Behaviors.receiveMessage<number>((n) => void got.push(n))) };
}

/** A journal whose appends (and optionally reads) wait for release(); counts calls. */
class GatedJournal extends JournalWrapper {
  constructor() {
    super(new MemoryJournal());
  }
  gate = false;
  failNextAppend: unknown = undefined;
  failReads = 0;
  appends = 0;
  private waiting: (() => void)[] = [];
  release(): void {
    const w = this.waiting;
    this.waiting = [];
    for (const f of w) f();
  }
  get pending(): number {
    return this.waiting.length;
  }
  override async append(...args: Parameters<Journal["append"]>): Promise<void> {
    this.appends++;
    if (this.gate) await new Promise<void>((r) => this.waiting.push(r));
    if (this.failNextAppend !== undefined) {
      const e = this.failNextAppend;
      this.failNextAppend = undefined;
      throw e;
    }
    return this.inner.append(...args);
  }
  override async highestSequenceNr(pid: string) {
    if (this.failReads > 0) {
      this.failReads--;
      throw new PersistenceStoreError("read", pid, new Error("db down"));
    }
    return this.inner.highestSequenceNr(pid);
  }
}

function failures(s: SimSystem): ActorFailed[] {
  const out: ActorFailed[] = [];
  s.system.eventStream.subscribe("ActorFailed", (e) => out.push(e));
  return out;
}

// ------------------------------------------------------------------ tests

describe("persistenceIdOf", () => {
  it("is typeName|entityId and parses back; '|' in the type name is rejected", () => {
    expect(persistenceIdOf("Cart", "a|b")).toBe("Cart|a|b");
    expect(parsePersistenceId("Cart|a|b")).toEqual({ typeName: "Cart", entityId: "a|b" });
    expect(parsePersistenceId("nope")).toBeUndefined();
    expect(() => persistenceIdOf("Ca|rt", "x")).toThrow(ConfigError);
    expect(() => persistenceIdOf("", "x")).toThrow(ConfigError);
    expect(() => persistenceIdOf("Cart", "")).toThrow(ConfigError);
  });

  it("options are validated", () => {
    const j = new MemoryJournal();
    expect(() => counter(j, { snapshotAfter: 0 })).toThrow(ConfigError);
    expect(() => counter(j, { snapshotAfter: 5 })).toThrow(ConfigError); // no store
    expect(() => counter(j, { recoveryStashMax: -1 })).toThrow(ConfigError);
  });
});

describe("EventSourcedBehavior", () => {
  it("replies only after the append resolved, and stashes commands meanwhile", async () => {
    const s = simSystem();
    const j = new GatedJournal();
    const c = collector(s);
    const a = s.system.spawn(counter(j));
    await s.settle();
    j.gate = true;
    a.tell({ type: "add", n: 5, replyTo: c.ref });
    a.tell({ type: "get", replyTo: c.ref });
    await s.settle(1_000);
    expect(j.pending).toBe(1);
    expect(c.got).toEqual([]); // not durable yet: no reply, the get waits too
    expect(await j.inner.highestSequenceNr("Counter|c1")).toBe(0);
    j.release();
    await s.settle();
    expect(c.got).toEqual([5, 5]);
    expect(await j.inner.highestSequenceNr("Counter|c1")).toBe(1);
  });

  it("persists several events atomically and keeps command order", async () => {
    const s = simSystem();
    const j = new MemoryJournal();
    const c = collector(s);
    const a = s.system.spawn(counter(j));
    a.tell({ type: "addTwice", n: 2, replyTo: c.ref });
    a.tell({ type: "add", n: 1, replyTo: c.ref });
    a.tell({ type: "get", replyTo: c.ref });
    await s.settle();
    expect(c.got).toEqual([4, 5, 5]);
    const evs = await j.read("Counter|c1", 1, 10);
    expect(evs.map((e) => e.sequenceNr)).toEqual([1, 2, 3]);
    expect(evs[0]?.serializerId).toBe(7);
  });

  it("a new incarnation with the same persistenceId recovers its state from the journal", async () => {
    const s = simSystem();
    const j = new MemoryJournal();
    const c = collector(s);
    const a = s.system.spawn(counter(j), "a");
    a.tell({ type: "add", n: 3, replyTo: c.ref });
    a.tell({ type: "add", n: 4, replyTo: c.ref });
    a.tell({ type: "stop", replyTo: c.ref });
    await s.settle();
    expect(c.got).toEqual([3, 7, -1]);
    const recovered: number[] = [];
    const b = s.system.spawn(
      counter(j, { onRecoveryCompleted: (st) => void recovered.push(st.total) }),
      "b",
    );
    b.tell({ type: "add", n: 1, replyTo: c.ref });
    await s.settle();
    expect(recovered).toEqual([7]);
    expect(c.got).toEqual([3, 7, -1, 8]);
    expect(await j.highestSequenceNr("Counter|c1")).toBe(3);
  });

  it("snapshots every N events and recovers from the snapshot plus the tail", async () => {
    const s = simSystem();
    const j = new MemoryJournal();
    const snaps = new MemorySnapshotStore();
    const opts = { snapshots: snaps, snapshotCodec: jsonCodec<St>(9), snapshotAfter: 3 };
    const c = collector(s);
    const a = s.system.spawn(counter(j, opts), "a");
    for (let i = 1; i <= 4; i++) a.tell({ type: "add", n: i, replyTo: c.ref });
    a.tell({ type: "addTwice", n: 10, replyTo: c.ref }); // seqNr 5, 6: crosses 6
    a.tell({ type: "stop", replyTo: c.ref });
    await s.settle();
    expect(c.got).toEqual([1, 3, 6, 10, 30, -1]);
    const snap = await snaps.loadLatest("Counter|c1");
    expect(snap?.sequenceNr).toBe(6);
    expect((await snaps.loadLatest("Counter|c1", { maxSeqNr: 5 }))?.sequenceNr).toBe(3);
    // Prove recovery uses the snapshot: delete the events it covers, add a tail.
    await j.deleteTo("Counter|c1", 6);
    await j.append("Counter|c1", 7, [
      { ...jsonCodec<Ev>().encode({ type: "added", n: 1000 }), timestampMs: 0 },
    ]);
    const b = s.system.spawn(counter(j, opts), "b");
    b.tell({ type: "get", replyTo: c.ref });
    b.tell({ type: "add", n: 1, replyTo: c.ref });
    await s.settle();
    expect(c.got.slice(6)).toEqual([1030, 1031]);
    expect(await j.highestSequenceNr("Counter|c1")).toBe(8);
  });

  it("commands arriving during recovery are stashed and handled in order afterwards", async () => {
    const s = simSystem();
    const j = new MemoryJournal();
    await j.append("Counter|c1", 1, [
      { ...jsonCodec<Ev>().encode({ type: "added", n: 50 }), timestampMs: 0 },
    ]);
    let recoveredAt = -1;
    const c = collector(s);
    const a = s.system.spawn(
      counter(j, {
        onRecoveryCompleted: () => {
          recoveredAt = c.got.length;
        },
      }),
    );
    a.tell({ type: "get", replyTo: c.ref });
    a.tell({ type: "add", n: 1, replyTo: c.ref });
    a.tell({ type: "get", replyTo: c.ref });
    await s.settle();
    expect(recoveredAt).toBe(0); // nothing was answered before recovery completed
    expect(c.got).toEqual([50, 51, 51]);
  });

  it("more than recoveryStashMax commands during recovery fail the entity with StashOverflowError", async () => {
    const s = simSystem();
    const fails = failures(s);
    const j = new MemoryJournal();
    const c = collector(s);
    let recoveries = 0;
    const a = s.system.spawn(
      counter(j, { recoveryStashMax: 2, onRecoveryCompleted: () => void recoveries++ }),
    );
    for (let i = 0; i < 3; i++) a.tell({ type: "get", replyTo: c.ref });
    a.tell({ type: "add", n: 1, replyTo: c.ref });
    await s.settle(1_000);
    expect(fails).toHaveLength(1);
    expect(fails[0]?.error).toBeInstanceOf(StashOverflowError);
    expect(fails[0]?.directive).toBe("restart");
    // The two stashed commands were dropped; the entity restarted after its backoff
    // and handled what was still in the mailbox.
    expect(recoveries).toBe(1);
    expect(c.got).toEqual([1]);
    expect(s.system.stats.deadLetters).toBe(2);
  });

  it("commands beyond the stash capacity while an append is in flight fail the entity", async () => {
    const s = simSystem();
    const fails = failures(s);
    const j = new GatedJournal();
    const c = collector(s);
    const a = s.system.spawn(counter(j), "a", { stashCapacityMax: 1 });
    await s.settle();
    j.gate = true;
    a.tell({ type: "add", n: 1, replyTo: c.ref });
    a.tell({ type: "get", replyTo: c.ref });
    a.tell({ type: "get", replyTo: c.ref });
    await s.settle();
    expect(fails.map((f) => f.error instanceof StashOverflowError)).toEqual([true]);
    expect(c.got).toEqual([]);
  });

  it("a failed append fails the entity, which restarts with backoff and re-recovers", async () => {
    const s = simSystem();
    const fails = failures(s);
    const j = new GatedJournal();
    const c = collector(s);
    const startedAt: number[] = [];
    const a = s.system.spawn(
      counter(j, { onRecoveryCompleted: (_st, ctx) => void startedAt.push(ctx.now()) }),
    );
    a.tell({ type: "add", n: 1, replyTo: c.ref });
    await s.settle();
    j.failNextAppend = new PersistenceStoreError("append", "Counter|c1", new Error("disk full"));
    a.tell({ type: "add", n: 10, replyTo: c.ref }); // fails: never replied
    a.tell({ type: "get", replyTo: c.ref }); // buffered, survives the restart
    await s.settle(50);
    expect(fails).toHaveLength(1);
    expect(fails[0]?.error).toBeInstanceOf(EventSourcedPersistError);
    expect((fails[0]?.error as EventSourcedPersistError | undefined)?.seqNr).toBe(2);
    expect(fails[0]?.directive).toBe("restart");
    expect(c.got).toEqual([1]);
    await s.settle(100);
    expect(startedAt).toEqual([0, 100]);
    a.tell({ type: "add", n: 2, replyTo: c.ref });
    await s.settle();
    expect(c.got).toEqual([1, 1, 3]);
    expect(await j.inner.highestSequenceNr("Counter|c1")).toBe(2);
  });

  it("a failed recovery is a typed failure; the entity retries with backoff, keeping commands", async () => {
    const s = simSystem();
    const fails = failures(s);
    const j = new GatedJournal();
    await j.inner.append("Counter|c1", 1, [
      { ...jsonCodec<Ev>().encode({ type: "added", n: 5 }), timestampMs: 0 },
    ]);
    j.failReads = 2;
    const c = collector(s);
    const a = s.system.spawn(counter(j));
    a.tell({ type: "get", replyTo: c.ref });
    await s.settle(99);
    expect(fails.map((f) => f.error instanceof EventSourcedRecoveryError)).toEqual([true]);
    expect((fails[0]?.error as EventSourcedRecoveryError | undefined)?.code).toBe(
      "EVENT_SOURCED_RECOVERY_FAILED",
    );
    expect(c.got).toEqual([]);
    await s.settle(1); // 100 ms: second attempt fails, next after 200 ms
    expect(fails).toHaveLength(2);
    await s.settle(200);
    expect(c.got).toEqual([5]);
  });

  it("tells the system's recovery observer each recovery's duration and outcome (the metrics)", async () => {
    const s = simSystem();
    const seen: [number, string][] = [];
    s.system.core.recoveryObserver = (ms, outcome) => void seen.push([ms, outcome]);
    /** Every recovery's first read takes 50 ms of virtual time. */
    class SlowJournal extends GatedJournal {
      override async highestSequenceNr(pid: string) {
        await new Promise<void>((r) => s.system.runtime.scheduler.schedule(50, r));
        return super.highestSequenceNr(pid);
      }
    }
    const j = new SlowJournal();
    j.failReads = 1;
    const c = collector(s);
    const a = s.system.spawn(counter(j));
    a.tell({ type: "get", replyTo: c.ref });
    await s.until(() => c.got.length === 1, 5_000);
    expect(seen).toEqual([
      [50, "failed"],
      [50, "recovered"],
    ]);
    // without an observer, nothing is measured
    s.system.core.recoveryObserver = undefined;
    s.system.spawn(counter(j, {}, "c2")).tell({ type: "get", replyTo: c.ref });
    await s.until(() => c.got.length === 2, 5_000);
    expect(seen).toHaveLength(2);
  });

  it("JournalConflictError (another incarnation wrote) stops the entity for good", async () => {
    const s = simSystem();
    const fails = failures(s);
    const j = new MemoryJournal();
    const c = collector(s);
    let recoveries = 0;
    const mk = () => counter(j, { onRecoveryCompleted: () => void recoveries++ });
    const first = s.system.spawn(mk(), "first");
    const second = s.system.spawn(mk(), "second");
    await s.settle();
    expect(recoveries).toBe(2);
    first.tell({ type: "add", n: 1, replyTo: c.ref });
    await s.settle();
    second.tell({ type: "add", n: 100, replyTo: c.ref });
    second.tell({ type: "get", replyTo: c.ref });
    await s.settle(10_000);
    expect(c.got).toEqual([1]);
    expect(fails).toHaveLength(1);
    expect(fails[0]?.path).toContain("second");
    expect(fails[0]?.error).toBeInstanceOf(JournalConflictError);
    expect(fails[0]?.directive).toBe("stop");
    expect(recoveries).toBe(2); // no restart
    first.tell({ type: "get", replyTo: c.ref });
    await s.settle();
    expect(c.got).toEqual([1, 1]);
    expect(await j.highestSequenceNr("Counter|c1")).toBe(1);
  });

  it("FencedWriteError (a newer lease holder exists) stops the entity for good, nothing written", async () => {
    const s = simSystem();
    const fails = failures(s);
    const j = new MemoryJournal();
    const c = collector(s);
    let recoveries = 0;
    const fence = { key: "Counter/3", token: 1 };
    const stale = s.system.spawn(
      counter(j, { fence, onRecoveryCompleted: () => void recoveries++ }),
      "stale",
    );
    await s.settle();
    stale.tell({ type: "add", n: 1, replyTo: c.ref });
    await s.settle();
    expect(c.got).toEqual([1]);
    await j.advanceFence({ key: "Counter/3", token: 2 }); // the shard moved
    stale.tell({ type: "add", n: 100, replyTo: c.ref });
    await s.settle(10_000);
    expect(c.got).toEqual([1]);
    expect(fails).toHaveLength(1);
    expect(fails[0]?.error).toBeInstanceOf(FencedWriteError);
    expect(fails[0]?.directive).toBe("stop");
    expect(recoveries).toBe(1); // no restart
    expect(await j.highestSequenceNr("Counter|c1")).toBe(1);
  });

  it("Effect.none, reply, unhandled, stash/unstashAll and stop", async () => {
    const s = simSystem();
    const unhandled: unknown[] = [];
    s.system.eventStream.subscribe("UnhandledMessage", (e) => unhandled.push(e.message));
    const j = new GatedJournal();
    const c = collector(s);
    const a = s.system.spawn(counter(j));
    a.tell({ type: "noop" });
    a.tell({ type: "unknown" });
    a.tell({ type: "get", replyTo: c.ref });
    await s.settle();
    expect(j.appends).toBe(0);
    expect(unhandled).toEqual([{ type: "unknown" }]);
    expect(c.got).toEqual([0]);
    a.tell({ type: "hold" });
    a.tell({ type: "hold" });
    a.tell({ type: "release", replyTo: c.ref });
    a.tell({ type: "get", replyTo: c.ref });
    await s.settle();
    expect(c.got).toEqual([0, 100, 100]);
    a.tell({ type: "stop", replyTo: c.ref });
    a.tell({ type: "get", replyTo: c.ref });
    await s.settle();
    expect(c.got).toEqual([0, 100, 100, -1]);
    expect(s.system.stats.deadLetters).toBe(3); // two held commands + the late get
  });

  it("persist then thenStop: stops only after the events are durable", async () => {
    const s = simSystem();
    const j = new GatedJournal();
    const ran: number[] = [];
    const b = EventSourcedBehavior.create<{ n: number }, Ev, St>({
      persistenceId: persistenceIdOf("T", "1"),
      emptyState: { total: 0 },
      commandHandler: (_st, cmd) =>
        Effect.persist<Ev, St>({ type: "added", n: cmd.n })
          .thenRun((st) => void ran.push(st.total))
          .thenStop(),
      eventHandler: (st, e) => ({ total: st.total + e.n }),
      journal: j,
      eventCodec: jsonCodec<Ev>(),
      tagger: () => ["t"],
      timestampMs: () => 1234,
      onPostStop: (st) => void stoppedWith.push(st.total),
    });
    const stoppedWith: number[] = [];
    const a = s.system.spawn(b);
    await s.settle();
    j.gate = true;
    a.tell({ n: 3 });
    a.tell({ n: 4 });
    await s.settle(100);
    expect(ran).toEqual([]);
    j.release();
    await s.settle();
    expect(ran).toEqual([3]);
    expect(stoppedWith).toEqual([3]); // onPostStop sees the final state, once
    const evs = await j.inner.read("T|1", 1, 10);
    expect(evs.map((e) => [e.tags, e.timestampMs])).toEqual([[["t"], 1234]]);
    expect(s.system.stats.deadLetters).toBe(1);
  });
});
