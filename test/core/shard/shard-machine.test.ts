/**
 * Unit tests of the shard machine for what the scripts do not show well: queries,
 * programmer-error asserts, and inputs a driver may feed late or twice.
 */
import { describe, expect, it } from "vitest";
import { AssertionError } from "../../../src/base/assert.js";
import { ShardMachine } from "../../../src/core/shard/shard-machine.js";
import { EntityState, ShardPhase } from "../../../src/core/shard/shard-types.js";

function types(outs: readonly { type: string }[]): string[] {
  return outs.map((o) => o.type);
}

describe("ShardMachine", () => {
  it("starts running, or recovering when it remembers entities", () => {
    expect(new ShardMachine({ shardId: "1" }).phase).toBe(ShardPhase.Running);
    const m = new ShardMachine({ shardId: "1", settings: { rememberEntities: true } });
    expect(m.phase).toBe(ShardPhase.Recovering);
    m.handle({ type: "recovered-entities", entityIds: ["b", "a"] }, 0);
    expect(m.phase).toBe(ShardPhase.Running);
    expect(m.rememberedEntityIds()).toEqual(["a", "b"]);
    expect(m.liveEntityIds()).toEqual(["a", "b"]);
  });

  it("reports queries and running timers", () => {
    const m = new ShardMachine<string>({ shardId: "1" });
    m.handle({ type: "deliver", entityId: "a", message: "x" }, 0);
    expect(m.entityState("a")).toBe(EntityState.Starting);
    expect(m.entityState("zz")).toBeUndefined();
    expect(m.runningTimers()).toEqual(["idle-sweep"]);
    expect(m.stats).toEqual({
      liveEntities: 1,
      activeEntities: 1,
      bufferedMessages: 1,
      overflowCount: 0,
      activeLimit: Number.POSITIVE_INFINITY,
    });
  });

  it("ignores timers it is not running (fired after a cancel)", () => {
    const m = new ShardMachine<string>({ shardId: "1" });
    const out = m.handle({ type: "timer", key: "idle-sweep" }, 0);
    expect(types(out)).toEqual(["log"]);
    expect(m.handle({ type: "timer", key: "entity-restart:a" }, 0)).toHaveLength(1);
  });

  it("recovered-entities without remember entities is ignored with a warning", () => {
    const m = new ShardMachine<string>({ shardId: "1" });
    const out = m.handle({ type: "recovered-entities", entityIds: ["a"] }, 0);
    expect(out).toEqual([
      { type: "log", level: "warn", text: "recovered-entities ignored: remember-entities is off" },
    ]);
    expect(m.liveEntityIds()).toEqual([]);
  });

  it("asserts a valid active-entity limit", () => {
    const m = new ShardMachine<string>({ shardId: "1" });
    for (const limit of [0, -1, 1.5, Number.NaN])
      expect(() => m.handle({ type: "set-active-limit", limit }, 0)).toThrow(AssertionError);
    // the message names the rule and the bad value
    expect(() => m.handle({ type: "set-active-limit", limit: 0 }, 0)).toThrow(
      "active-entity limit must be an integer >= 1 or Infinity, got 0",
    );
    expect(() =>
      m.handle({ type: "set-active-limit", limit: Number.POSITIVE_INFINITY }, 0),
    ).not.toThrow();
  });

  it("after it stopped: messages go straight back, HandOff is answered, the rest ignored", () => {
    const m = new ShardMachine<string>({ shardId: "1" });
    m.handle({ type: "shutdown" }, 0);
    expect(m.handle({ type: "deliver", entityId: "a", message: "x" }, 0)).toEqual([
      { type: "return-to-region", messages: [{ entityId: "a", message: "x" }] },
    ]);
    expect(m.handle({ type: "hand-off" }, 0)).toEqual([{ type: "shard-stopped" }]);
    expect(m.handle({ type: "start-entity", entityId: "a" }, 0)).toEqual([]);
    expect(m.handle({ type: "remember-store-ack", batchId: 1 }, 0)).toEqual([]);
  });

  it("passes the stop message through unchanged", () => {
    const stop = { type: "stop", why: "passivate" } as const;
    const m = new ShardMachine<{ type: string }>({ shardId: "1" });
    m.handle({ type: "start-entity", entityId: "a" }, 0);
    m.handle({ type: "entity-started", entityId: "a" }, 0);
    const out = m.handle({ type: "passivate", entityId: "a", stopMessage: stop }, 0);
    expect(out).toEqual([
      { type: "stop-entity-actor", entityId: "a", stopMessage: stop, reason: "passivate" },
    ]);
  });
});
