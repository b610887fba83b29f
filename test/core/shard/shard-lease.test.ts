/**
 * Scripted tests of the shard lease machine (core/shard/shard-lease-machine.ts) and of
 * the shard machine's lease gate: step by step, time as an input.
 */
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/base/errors.js";
import {
  DEFAULT_SHARD_LEASE_SETTINGS,
  resolveShardLeaseSettings,
  ShardLeaseMachine,
  type ShardLeaseOutput,
  ShardLeaseTimer,
  shardLeaseValidityMs,
} from "../../../src/core/shard/shard-lease-machine.js";
import { ShardMachine } from "../../../src/core/shard/shard-machine.js";
import { ShardPhase } from "../../../src/core/shard/shard-types.js";

/** ttl 4000, renew 1000, bound 1 %, margin 500: validity 3460 ms. */
const S = DEFAULT_SHARD_LEASE_SETTINGS;
const noLogs = (outs: readonly ShardLeaseOutput[]) => outs.filter((o) => o.type !== "log");
const timers = (outs: readonly ShardLeaseOutput[]) =>
  Object.fromEntries(
    outs.flatMap((o) => (o.type === "start-timer" ? [[o.key, o.delayMs] as const] : [])),
  );

describe("ShardLeaseMachine", () => {
  it("validity = ttl * (1 - clockRateBound) - safetyMargin; settings are checked", () => {
    expect(shardLeaseValidityMs(S)).toBe(3_460);
    expect(() => resolveShardLeaseSettings({ renewIntervalMs: 3_460 })).toThrow(ConfigError);
    expect(() => resolveShardLeaseSettings({ safetyMarginMs: 4_000 })).toThrow(ConfigError);
    expect(() => resolveShardLeaseSettings({ clockRateBound: 0.6 })).toThrow(ConfigError);
    expect(() => resolveShardLeaseSettings({ ttlMs: -1 })).toThrow(/sharding\.lease\.ttlMs/);
  });

  it("acquire -> granted with the token; deadline from the send time of the request", () => {
    const m = new ShardLeaseMachine();
    expect(m.handle({ type: "start" }, 100)).toEqual([
      { type: "acquire", sentAtMs: 100, renewal: false },
    ]);
    // the answer takes 300 ms: the deadline still counts from 100
    const out = m.handle({ type: "acquire-result", sentAtMs: 100, token: 7 }, 400);
    expect(noLogs(out).find((o) => o.type === "granted")).toEqual({ type: "granted", token: 7 });
    expect(timers(out)).toEqual({
      [ShardLeaseTimer.Deadline]: 100 + 3_460 - 400,
      [ShardLeaseTimer.Renew]: 1_000,
    });
    expect(m.token).toBe(7);
    expect(m.deadlineMs).toBe(3_560);
  });

  it("renewals move the deadline; a deadline without a successful renewal loses the lease", () => {
    const m = new ShardLeaseMachine();
    m.handle({ type: "start" }, 0);
    m.handle({ type: "acquire-result", sentAtMs: 0, token: 1 }, 10);
    expect(m.handle({ type: "timer", key: ShardLeaseTimer.Renew }, 1_010)).toEqual([
      { type: "acquire", sentAtMs: 1_010, renewal: true },
    ]);
    const renewed = m.handle({ type: "acquire-result", sentAtMs: 1_010, token: 1 }, 1_020);
    expect(timers(renewed)[ShardLeaseTimer.Deadline]).toBe(1_010 + 3_460 - 1_020);
    // the store goes away: renewals fail, retried, until the deadline
    m.handle({ type: "timer", key: ShardLeaseTimer.Renew }, 2_020);
    const failed = m.handle(
      { type: "acquire-result", sentAtMs: 2_020, token: undefined, error: "down" },
      2_030,
    );
    expect(timers(failed)).toEqual({ [ShardLeaseTimer.Renew]: 500 });
    expect(noLogs(m.handle({ type: "timer", key: ShardLeaseTimer.Deadline }, 4_470))).toEqual([
      { type: "cancel-timer", key: ShardLeaseTimer.AcquireRetry },
      { type: "cancel-timer", key: ShardLeaseTimer.Renew },
      { type: "cancel-timer", key: ShardLeaseTimer.Deadline },
      { type: "lost", reason: "no successful renewal within 3460 ms (deadline)" },
    ]);
    expect(m.phase).toBe("lost");
    // a late success changes nothing
    expect(m.handle({ type: "acquire-result", sentAtMs: 4_000, token: 1 }, 4_480)).toEqual([]);
  });

  it("a renewal answered with another token, or by another owner, loses the lease at once", () => {
    for (const token of [2, undefined]) {
      const m = new ShardLeaseMachine();
      m.handle({ type: "start" }, 0);
      m.handle({ type: "acquire-result", sentAtMs: 0, token: 1 }, 0);
      m.handle({ type: "timer", key: ShardLeaseTimer.Renew }, 1_000);
      const out = m.handle({ type: "acquire-result", sentAtMs: 1_000, token }, 1_001);
      expect(out.some((o) => o.type === "lost")).toBe(true);
    }
  });

  it("held elsewhere or unavailable: retries acquiring; a too-late grant is not used", () => {
    const m = new ShardLeaseMachine();
    m.handle({ type: "start" }, 0);
    const taken = m.handle({ type: "acquire-result", sentAtMs: 0, token: undefined }, 5);
    expect(timers(taken)).toEqual({ [ShardLeaseTimer.AcquireRetry]: 500 });
    expect(m.handle({ type: "timer", key: ShardLeaseTimer.AcquireRetry }, 505)).toEqual([
      { type: "acquire", sentAtMs: 505, renewal: false },
    ]);
    // answered after its whole validity: not granted, retried
    const late = m.handle({ type: "acquire-result", sentAtMs: 505, token: 3 }, 505 + 3_460);
    expect(late.some((o) => o.type === "granted")).toBe(false);
    expect(m.phase).toBe("acquiring");
  });

  it("release: gives a held (or maybe-granted) lease up once, then ignores everything", () => {
    const m = new ShardLeaseMachine();
    m.handle({ type: "start" }, 0);
    expect(noLogs(m.handle({ type: "release" }, 1)).at(-1)).toEqual({ type: "release" });
    expect(m.handle({ type: "release" }, 2)).toEqual([]);
    expect(m.handle({ type: "acquire-result", sentAtMs: 0, token: 1 }, 3)).toEqual([]);
  });
});

describe("ShardMachine with leaseRequired", () => {
  it("buffers messages until lease-granted, then starts entities in arrival order", () => {
    const m = new ShardMachine<string>({ shardId: "1", leaseRequired: true });
    expect(m.phase).toBe(ShardPhase.Recovering);
    expect(m.handle({ type: "deliver", entityId: "a", message: "m1" }, 0)).toEqual([]);
    expect(m.handle({ type: "start-entity", entityId: "b" }, 0)).toEqual([]);
    expect(m.liveEntityIds()).toEqual([]);
    const out = m.handle({ type: "lease-granted" }, 1);
    expect(out.filter((o) => o.type === "start-entity-actor")).toEqual([
      { type: "start-entity-actor", entityId: "a" },
      { type: "start-entity-actor", entityId: "b" },
    ]);
    expect(m.phase).toBe(ShardPhase.Running);
  });

  it("the buffer while waiting is bounded by bufferSizeMax", () => {
    const m = new ShardMachine<string>({
      shardId: "1",
      leaseRequired: true,
      settings: { bufferSizeMax: 2 },
    });
    for (const msg of ["m1", "m2"]) m.handle({ type: "deliver", entityId: "a", message: msg }, 0);
    const out = m.handle({ type: "deliver", entityId: "a", message: "m3" }, 0);
    expect(out.filter((o) => o.type !== "log")).toEqual([
      { type: "buffer-overflow", entityId: "a", message: "m3" },
    ]);
  });

  it("with remember entities: recovered-entities only counts after the lease", () => {
    const m = new ShardMachine<string>({
      shardId: "1",
      leaseRequired: true,
      settings: { rememberEntities: true },
    });
    m.handle({ type: "recovered-entities", entityIds: ["x"] }, 0);
    expect(m.liveEntityIds()).toEqual([]);
    m.handle({ type: "lease-granted" }, 1);
    expect(m.phase).toBe(ShardPhase.Recovering);
    m.handle({ type: "recovered-entities", entityIds: ["x"] }, 2);
    expect(m.liveEntityIds()).toEqual(["x"]);
  });

  it("lease-lost force-stops every entity, hands messages back and reports shard-stopped", () => {
    const m = new ShardMachine<string>({ shardId: "1", leaseRequired: true });
    m.handle({ type: "lease-granted" }, 0);
    m.handle({ type: "deliver", entityId: "a", message: "m1" }, 0);
    m.handle({ type: "entity-started", entityId: "a" }, 0);
    m.handle({ type: "deliver", entityId: "b", message: "m2" }, 0); // b starting, m2 buffered
    const out = m.handle({ type: "lease-lost" }, 5);
    const kinds = out.map((o) => o.type).filter((t) => t !== "cancel-timer" && t !== "log");
    expect(kinds).toEqual([
      "force-stop-entity-actor",
      "force-stop-entity-actor",
      "return-to-region",
      "shard-stopped",
    ]);
    expect(out.find((o) => o.type === "return-to-region")).toEqual({
      type: "return-to-region",
      messages: [{ entityId: "b", message: "m2" }],
    });
    expect(m.phase).toBe(ShardPhase.Stopped);
  });
});
