/**
 * Unit tests of the region's small parts: settings validation and backoff, the
 * active-entity share per shard, the escalating buffer-level warning, the per-shard
 * buffers, and the machine's guard against inputs before `start`.
 */
import { describe, expect, it } from "vitest";
import { AssertionError } from "../../../src/base/assert.js";
import { ConfigError } from "../../../src/base/errors.js";
import { BufferLevelWarning } from "../../../src/core/region/buffer-level-warning.js";
import { RegionMachine } from "../../../src/core/region/region-machine.js";
import {
  DEFAULT_REGION_SETTINGS,
  perShardActiveLimit,
  registrationDelayMs,
  resolveRegionSettings,
} from "../../../src/core/region/region-settings.js";
import { ShardBuffers } from "../../../src/core/region/shard-buffers.js";

describe("perShardActiveLimit", () => {
  it("is an even share of the region's limit, at least 1; Infinity without a limit", () => {
    expect(perShardActiveLimit(0, 5)).toBe(Number.POSITIVE_INFINITY);
    expect(perShardActiveLimit(100, 0)).toBe(100);
    expect(perShardActiveLimit(100, 3)).toBe(33);
    expect(perShardActiveLimit(2, 5)).toBe(1);
  });
});

describe("region settings", () => {
  it("defaults to the documented values", () => {
    expect(resolveRegionSettings()).toEqual({
      retryIntervalMs: 2_000,
      registrationRetryMinMs: 100,
      bufferSizeMax: 100_000,
      warnIntervalMs: 10_000,
      activeEntityLimit: 0,
    });
  });

  it("rejects bad values, unknown keys and a minimum above the interval, naming the key", () => {
    expect(() => resolveRegionSettings({ bufferSizeMax: 0 })).toThrow(ConfigError);
    expect(() => resolveRegionSettings({ retryIntervalMs: -1 })).toThrow(/region.retryIntervalMs/);
    expect(() => resolveRegionSettings({ bufferSizeMax: 1.5 })).toThrow(/region.bufferSizeMax/);
    expect(() => resolveRegionSettings({ activeEntityLimit: -1 })).toThrow(
      /region.activeEntityLimit/,
    );
    expect(() => resolveRegionSettings({ retryIntervalMz: 5 } as never)).toThrow(ConfigError);
    expect(() =>
      resolveRegionSettings({ registrationRetryMinMs: 3_000, retryIntervalMs: 2_000 }),
    ).toThrow(/registrationRetryMinMs/);
  });

  it("accepts a registration minimum equal to the interval; above it, says the bound", () => {
    expect(
      resolveRegionSettings({ registrationRetryMinMs: 2_000, retryIntervalMs: 2_000 }),
    ).toMatchObject({ registrationRetryMinMs: 2_000, retryIntervalMs: 2_000 });
    expect(() =>
      resolveRegionSettings({ registrationRetryMinMs: 2_001, retryIntervalMs: 2_000 }),
    ).toThrow(
      "invalid setting region.registrationRetryMinMs=2001: expected a duration in milliseconds <= retryIntervalMs (2000)",
    );
  });

  it("backs off registration from the minimum, doubling, capped at retryIntervalMs", () => {
    const delays = [0, 1, 2, 3, 4, 5, 6, 100].map((n) =>
      registrationDelayMs(DEFAULT_REGION_SETTINGS, n),
    );
    expect(delays).toEqual([100, 200, 400, 800, 1_600, 2_000, 2_000, 2_000]);
  });
});

describe("BufferLevelWarning", () => {
  it("reports 10, 50 and 90 percent once each, escalating to error", () => {
    const w = new BufferLevelWarning(100, 1_000);
    const seen = [];
    for (let total = 1; total <= 100; total++) {
      const warning = w.onGrown(total, 0);
      if (warning !== undefined) seen.push([total, warning.percent, warning.level]);
    }
    expect(seen).toEqual([
      [10, 10, "warn"],
      [50, 50, "warn"],
      [90, 90, "error"],
    ]);
  });

  it("jumps straight to the highest level reached", () => {
    const w = new BufferLevelWarning(10, 1_000);
    expect(w.onGrown(9, 0)).toEqual({ level: "error", percent: 90 });
    expect(w.onGrown(10, 0)).toBeUndefined();
  });

  it("re-arms only after the buffers emptied and warnIntervalMs passed", () => {
    const w = new BufferLevelWarning(10, 1_000);
    expect(w.onGrown(1, 0)?.percent).toBe(10);
    expect(w.onGrown(1, 5_000)).toBeUndefined(); // never emptied
    w.onEmpty();
    expect(w.onGrown(1, 500)).toBeUndefined(); // emptied, but too soon after the warning
    expect(w.onGrown(1, 1_000)?.percent).toBe(10);
  });
});

describe("ShardBuffers", () => {
  it("keeps FIFO order per shard, puts returned messages in front, counts the total", () => {
    const b = new ShardBuffers<string>();
    b.push("1", { entityId: "e", message: "m3" });
    b.push("2", { entityId: "f", message: "x" });
    b.push("1", { entityId: "e", message: "m4" });
    b.prepend("1", [
      { entityId: "e", message: "m1" },
      { entityId: "e", message: "m2" },
    ]);
    expect(b.total).toBe(5);
    expect(b.sizeOf("1")).toBe(4);
    expect(b.shards()).toEqual(["1", "2"]);
    expect(b.take("1").map((e) => e.message)).toEqual(["m1", "m2", "m3", "m4"]);
    expect(b.has("1")).toBe(false);
    expect(b.total).toBe(1);
    expect(b.take("1")).toEqual([]);
  });
});

describe("RegionMachine", () => {
  it("refuses inputs before start (a driver bug)", () => {
    const m = new RegionMachine<string>({ self: "A", member: "a", typeName: "T" });
    expect(() => m.handle({ type: "deliver", shard: "1", entityId: "e", message: "m" }, 0)).toThrow(
      new AssertionError('region input "deliver" before "start"'),
    );
    expect(m.handle({ type: "start" }, 0)).toEqual([
      { type: "start-timer", key: "register", delayMs: 100 },
    ]);
    expect(() => m.handle({ type: "start" }, 0)).toThrow(
      new AssertionError("region started twice"),
    );
  });

  it("refuses an input or coordinator message of unknown type (an untyped driver's bug)", () => {
    const m = new RegionMachine<string>({ self: "A", member: "a", typeName: "T" });
    m.handle({ type: "start" }, 0);
    expect(() => m.handle({ type: "bogus" } as never, 0)).toThrow(
      new AssertionError('unexpected region input: {"type":"bogus"}'),
    );
    const message = { type: "bogus" } as never;
    expect(() => m.handle({ type: "coordinator-message", from: "C1", message }, 0)).toThrow(
      new AssertionError('unexpected coordinator message: {"type":"bogus"}'),
    );
  });

  it("is a region, not a proxy, unless configured as one", () => {
    const m = new RegionMachine<string>({ self: "A", member: "a", typeName: "T" });
    m.handle({ type: "start" }, 0);
    expect(m.handle({ type: "coordinator-changed", coordinator: "C1" }, 0)).toContainEqual({
      type: "send-to-coordinator",
      coordinator: "C1",
      message: { type: "register", region: "A", member: "a", hostedShards: [] },
    });
    m.handle(
      {
        type: "coordinator-message",
        from: "C1",
        message: { type: "register-ack", coordinator: "C1" },
      },
      0,
    );
    expect(
      m.handle(
        { type: "coordinator-message", from: "C1", message: { type: "host-shard", shard: "1" } },
        0,
      ),
    ).toEqual([{ type: "start-shard", shard: "1" }]);
  });

  it("validates its settings", () => {
    expect(
      () =>
        new RegionMachine({
          self: "A",
          member: "a",
          typeName: "T",
          settings: { bufferSizeMax: -1 },
        }),
    ).toThrow(ConfigError);
  });
});
