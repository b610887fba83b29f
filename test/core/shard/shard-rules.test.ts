/**
 * Rules of the shard machine (src/core/shard/shard-machine.ts) and its remember writer
 * that the scripts leave implicit: what start-entity does in each entity state, one
 * overflow warning per full-buffer episode, idle passivation only of confirmed entities,
 * the "all" recovery strategy, queries, and what an ignored input says.
 */
import { describe, expect, it } from "vitest";
import { AssertionError } from "../../../src/base/assert.js";
import { RememberWriter } from "../../../src/core/shard/remember-writer.js";
import { ShardMachine } from "../../../src/core/shard/shard-machine.js";
import type { ShardInput, ShardOutput } from "../../../src/core/shard/shard-types.js";

type Out = ShardOutput<string>;
const kinds = (outs: readonly Out[]) => outs.filter((o) => o.type !== "log").map((o) => o.type);
const logs = (outs: readonly Out[]) =>
  outs.flatMap((o) => (o.type === "log" ? [`${o.level} ${o.text}`] : []));
const deliver = (entityId: string, message: string): ShardInput<string> => ({
  type: "deliver",
  entityId,
  message,
});

/** Entity `a` crashed before it was confirmed, with messages waiting: in backoff. */
function inBackoff(): ShardMachine<string> {
  const m = new ShardMachine<string>({ shardId: "1" });
  m.handle(deliver("a", "m1"), 0);
  m.handle(deliver("a", "m2"), 0);
  m.handle({ type: "entity-terminated", entityId: "a", passivated: false, failed: true }, 1);
  return m;
}

describe("ShardMachine rules", () => {
  it("an entity in backoff is tracked but not live; running timers are listed sorted", () => {
    const m = inBackoff();
    expect(m.entityIds()).toEqual(["a"]);
    expect(m.stats.liveEntities).toBe(0);
    expect(m.runningTimers()).toEqual(["entity-restart:a", "idle-sweep"]);
  });

  it("start-entity restarts an entity in backoff at once", () => {
    const m = inBackoff();
    expect(m.handle({ type: "start-entity", entityId: "a" }, 2)).toEqual([
      { type: "cancel-timer", key: "entity-restart:a" },
      { type: "start-entity-actor", entityId: "a" },
    ]);
  });

  it("start-entity for an active entity changes nothing, also not after it passivates", () => {
    const m = new ShardMachine<string>({ shardId: "1" });
    m.handle({ type: "start-entity", entityId: "a" }, 0);
    m.handle({ type: "entity-started", entityId: "a" }, 0);
    expect(m.handle({ type: "start-entity", entityId: "a" }, 1)).toEqual([]);
    m.handle({ type: "passivate", entityId: "a", stopMessage: undefined }, 2);
    const out = m.handle(
      { type: "entity-terminated", entityId: "a", passivated: true, failed: false },
      3,
    );
    expect(kinds(out)).toEqual([]);
    expect(m.entityIds()).toEqual([]);
  });

  it("start-entity while the entity's 'stopped' is being remembered starts it again after the write", () => {
    const m = new ShardMachine<string>({ shardId: "1", settings: { rememberEntities: true } });
    m.handle({ type: "recovered-entities", entityIds: ["a"] }, 0);
    m.handle({ type: "entity-started", entityId: "a" }, 0);
    m.handle({ type: "passivate", entityId: "a", stopMessage: undefined }, 1);
    const stopped = m.handle(
      { type: "entity-terminated", entityId: "a", passivated: true, failed: false },
      2,
    );
    expect(stopped.filter((o) => o.type === "write-remember")).toEqual([
      { type: "write-remember", batchId: 1, batch: { started: [], stopped: ["a"] } },
    ]);
    expect(m.handle({ type: "start-entity", entityId: "a" }, 3)).toEqual([]);
    const acked = m.handle({ type: "remember-store-ack", batchId: 1 }, 4);
    expect(acked).toEqual([
      { type: "write-remember", batchId: 2, batch: { started: ["a"], stopped: [] } },
    ]);
    expect(kinds(m.handle({ type: "remember-store-ack", batchId: 2 }, 5))).toContain(
      "start-entity-actor",
    );
  });

  it("a full buffer is warned about once per episode: again only after it had room", () => {
    const m = new ShardMachine<string>({ shardId: "1", settings: { bufferSizeMax: 1 } });
    m.handle({ type: "start-entity", entityId: "c" }, 0); // starting, nothing buffered
    m.handle(deliver("a", "m1"), 0); // the one slot
    expect(logs(m.handle(deliver("b", "m2"), 0))).toEqual([
      "warn shard buffer full (bufferSizeMax=1)",
    ]);
    // c is confirmed with an empty buffer: no slot is freed, still the same episode
    m.handle({ type: "entity-started", entityId: "c" }, 1);
    const again = m.handle(deliver("b", "m3"), 1);
    expect(kinds(again)).toEqual(["buffer-overflow"]);
    expect(logs(again)).toEqual([]);
    // a is confirmed: m1 leaves the buffer; the next overflow is a new episode
    m.handle({ type: "entity-started", entityId: "a" }, 2);
    m.handle(deliver("d", "m4"), 2);
    expect(logs(m.handle(deliver("e", "m5"), 2))).toEqual([
      "warn shard buffer full (bufferSizeMax=1)",
    ]);
  });

  it("start-entity while recovering with a full buffer is dropped with a warning", () => {
    const m = new ShardMachine<string>({
      shardId: "1",
      settings: { rememberEntities: true, bufferSizeMax: 1 },
    });
    m.handle(deliver("a", "m1"), 0);
    expect(m.handle({ type: "start-entity", entityId: "b" }, 0)).toEqual([
      { type: "log", level: "warn", text: "start-entity b dropped: shard buffer full" },
    ]);
  });

  it("idle passivation stops only confirmed entities, never one still starting", () => {
    const m = new ShardMachine<string>({ shardId: "1", settings: { passivateIdleAfterMs: 100 } });
    m.handle(deliver("slow", "m1"), 0); // never confirmed
    m.handle({ type: "start-entity", entityId: "idle" }, 0);
    m.handle({ type: "entity-started", entityId: "idle" }, 0);
    const out = m.handle({ type: "timer", key: "idle-sweep" }, 1_000);
    expect(out.filter((o) => o.type === "stop-entity-actor")).toEqual([
      { type: "stop-entity-actor", entityId: "idle", stopMessage: undefined, reason: "idle" },
    ]);
  });

  it('recovery strategy "all" starts every remembered entity at once, whatever the constant rate', () => {
    const m = new ShardMachine<string>({
      shardId: "1",
      settings: {
        rememberEntities: true,
        entityRecoveryStrategy: "all",
        entityRecoveryConstantRateNumberOfEntities: 1,
      },
    });
    const out = m.handle({ type: "recovered-entities", entityIds: ["a", "b", "c"] }, 0);
    expect(out.filter((o) => o.type === "start-entity-actor").length).toBe(3);
    expect(m.runningTimers()).not.toContain("entity-recovery");
  });

  it("an input of an unknown type is a programming error", () => {
    const m = new ShardMachine<string>({ shardId: "1" });
    expect(() => m.handle({ type: "bogus" } as unknown as ShardInput<string>, 0)).toThrow(
      /shard input/,
    );
  });

  it("an ignored input says why, at debug level", () => {
    const m = new ShardMachine<string>({ shardId: "1" });
    expect(
      logs(
        m.handle({ type: "entity-terminated", entityId: "x", passivated: false, failed: false }, 0),
      ),
    ).toEqual(["debug termination of x ignored: no live incarnation"]);
    expect(logs(m.handle({ type: "timer", key: "entity-restart:x" }, 0))).toEqual([
      "debug timer entity-restart:x ignored: not running",
    ]);
    expect(logs(m.handle({ type: "lease-granted" }, 0))).toEqual([
      "debug lease-granted ignored (running)",
    ]);
    m.handle({ type: "start-entity", entityId: "a" }, 0);
    m.handle({ type: "hand-off", stopMessage: undefined }, 1);
    expect(logs(m.handle({ type: "hand-off", stopMessage: undefined }, 2))).toEqual([
      "debug hand-off ignored: already handing off",
    ]);
    const r = new ShardMachine<string>({ shardId: "1", settings: { rememberEntities: true } });
    r.handle({ type: "recovered-entities", entityIds: [] }, 0);
    expect(logs(r.handle({ type: "recovered-entities", entityIds: ["a"] }, 1))).toEqual([
      "debug recovered-entities ignored (running)",
    ]);
  });

  it("with a lease and remember entities, the grant is logged and a second grant ignored", () => {
    const m = new ShardMachine<string>({
      shardId: "1",
      leaseRequired: true,
      settings: { rememberEntities: true },
    });
    expect(m.handle({ type: "lease-granted" }, 0)).toEqual([
      { type: "log", level: "debug", text: "shard lease granted" },
    ]);
    expect(m.handle({ type: "lease-granted" }, 1)).toEqual([
      { type: "log", level: "debug", text: "lease-granted ignored (recovering)" },
    ]);
  });
});

describe("RememberWriter rules", () => {
  it("needs room for at least one id per write", () => {
    expect(() => new RememberWriter(0)).toThrow(AssertionError);
    expect(() => new RememberWriter(0)).toThrow(/maxUpdatesPerWrite must be >= 1/);
  });

  it("is not idle while a change is queued", () => {
    const w = new RememberWriter(1);
    w.enqueue("a", "started");
    expect(w.idle).toBe(false);
  });

  it("a failure of another batch than the one in flight is ignored", () => {
    const w = new RememberWriter(1);
    w.enqueue("a", "started");
    w.next();
    expect(w.fail(2, true)).toBeUndefined();
    expect(w.writing?.batchId).toBe(1);
  });

  it("a second change of one entity is refused, naming it", () => {
    const w = new RememberWriter(1);
    w.enqueue("a", "started");
    expect(() => w.enqueue("a", "stopped")).toThrow(/entity "a" already has a remember change/);
  });
});
