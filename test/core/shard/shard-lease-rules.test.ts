/**
 * The shard lease machine's rules one by one (src/core/shard/shard-lease-machine.ts):
 * setting bounds at their edges, the deadline at its edge, which timer may send a request
 * in which phase, when a release reaches the store, and what the operator reads in the
 * logs. The walk-throughs are in shard-lease.test.ts; these pin what a mutant could change.
 */
import { describe, expect, it } from "vitest";
import { AssertionError } from "../../../src/base/assert.js";
import { ConfigError } from "../../../src/base/errors.js";
import {
  resolveShardLeaseSettings,
  type ShardLeaseInput,
  ShardLeaseMachine,
  type ShardLeaseOutput,
  ShardLeaseTimer,
} from "../../../src/core/shard/shard-lease-machine.js";

/** Default settings: validity 3460 ms (ttl 4000, bound 1 %, margin 500), renew 1000. */
const noLogs = (outs: readonly ShardLeaseOutput[]) => outs.filter((o) => o.type !== "log");
const logs = (outs: readonly ShardLeaseOutput[]) =>
  outs.flatMap((o) => (o.type === "log" ? [`${o.level} ${o.text}`] : []));
const timer = (key: string): ShardLeaseInput => ({ type: "timer", key });

/** A machine holding token 1, granted on a request sent at 0. */
function held(): ShardLeaseMachine {
  const m = new ShardLeaseMachine();
  m.handle({ type: "start" }, 0);
  m.handle({ type: "acquire-result", sentAtMs: 0, token: 1 }, 0);
  return m;
}

function configError(f: () => unknown): ConfigError {
  try {
    f();
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error("no ConfigError");
}

describe("ShardLeaseMachine rules", () => {
  it("a safety margin that leaves no validity at all is refused, naming the margin and the bound", () => {
    // floor(4000 * 0.99) = 3960: a margin of 3960 leaves 0 ms
    const e = configError(() => resolveShardLeaseSettings({ safetyMarginMs: 3_960 }));
    expect([e.key, e.value, e.allowed]).toEqual([
      "sharding.lease.safetyMarginMs",
      3_960,
      "less than ttlMs * (1 - clockRateBound) = 3960",
    ]);
    expect(() =>
      resolveShardLeaseSettings({ safetyMarginMs: 3_958, renewIntervalMs: 1 }),
    ).not.toThrow();
  });

  it("a renewal interval not below the validity is refused, naming the validity", () => {
    const e = configError(() => resolveShardLeaseSettings({ renewIntervalMs: 3_460 }));
    expect([e.key, e.value, e.allowed]).toEqual([
      "sharding.lease.renewIntervalMs",
      3_460,
      "less than ttlMs * (1 - clockRateBound) - safetyMarginMs = 3460",
    ]);
  });

  it("an input of an unknown type is a programming error", () => {
    const m = new ShardLeaseMachine();
    expect(() => m.handle({ type: "bogus" } as unknown as ShardLeaseInput, 0)).toThrow(
      AssertionError,
    );
    expect(() => m.handle({ type: "bogus" } as unknown as ShardLeaseInput, 0)).toThrow(
      /shard lease input/,
    );
  });

  it("a second start while acquiring sends no second request", () => {
    const m = new ShardLeaseMachine();
    m.handle({ type: "start" }, 0);
    expect(m.handle({ type: "start" }, 1)).toEqual([]);
  });

  it("token and deadline are only reported while the lease is held", () => {
    const m = held();
    expect([m.token, m.deadlineMs]).toEqual([1, 3_460]);
    m.handle(timer(ShardLeaseTimer.Deadline), 3_460);
    expect(m.phase).toBe("lost");
    expect([m.token, m.deadlineMs]).toEqual([undefined, undefined]);
  });

  it("why an acquisition failed is logged with the retry interval", () => {
    const m = new ShardLeaseMachine();
    m.handle({ type: "start" }, 0);
    const taken = m.handle({ type: "acquire-result", sentAtMs: 0, token: undefined }, 1);
    m.handle(timer(ShardLeaseTimer.AcquireRetry), 501);
    const down = m.handle(
      { type: "acquire-result", sentAtMs: 501, token: undefined, error: "ECONNREFUSED" },
      502,
    );
    m.handle(timer(ShardLeaseTimer.AcquireRetry), 1_002);
    const late = m.handle({ type: "acquire-result", sentAtMs: 1_002, token: 4 }, 1_002 + 3_460);
    expect([...logs(taken), ...logs(down), ...logs(late)]).toEqual([
      "debug lease not acquired (held by another owner); retry in 500 ms",
      "debug lease not acquired (store unavailable: ECONNREFUSED); retry in 500 ms",
      "debug lease not acquired (the answer came too late); retry in 500 ms",
    ]);
  });

  it("a renewal the store refuses as held by another owner loses the lease, saying so", () => {
    const m = held();
    m.handle(timer(ShardLeaseTimer.Renew), 1_000);
    const out = m.handle({ type: "acquire-result", sentAtMs: 1_000, token: undefined }, 1_001);
    expect(noLogs(out).at(-1)).toEqual({
      type: "lost",
      reason: "the lease is held by another owner",
    });
    expect(logs(out)).toEqual([
      "warn shard lease lost: the lease is held by another owner; stopping the shard's entities",
    ]);
  });

  it("a renewal answered with another token loses the lease, naming both tokens", () => {
    const m = held();
    m.handle(timer(ShardLeaseTimer.Renew), 1_000);
    const out = m.handle({ type: "acquire-result", sentAtMs: 1_000, token: 2 }, 1_001);
    expect(noLogs(out).at(-1)).toEqual({
      type: "lost",
      reason: "the lease expired in the store (token 1 became 2)",
    });
  });

  it("a failed renewal is logged as a warning with its retry interval", () => {
    const m = held();
    m.handle(timer(ShardLeaseTimer.Renew), 1_000);
    const out = m.handle(
      { type: "acquire-result", sentAtMs: 1_000, token: undefined, error: "timeout" },
      1_001,
    );
    expect(logs(out)).toEqual(["warn lease renewal failed (timeout); retry in 500 ms"]);
  });

  it("an answer to an older request never moves the deadline back", () => {
    const m = held();
    m.handle(timer(ShardLeaseTimer.Renew), 1_000);
    m.handle({ type: "acquire-result", sentAtMs: 1_000, token: 1 }, 1_010);
    expect(m.deadlineMs).toBe(4_460);
    // a driver feeding back a late answer of a request sent at 500
    m.handle({ type: "acquire-result", sentAtMs: 500, token: 1 }, 1_020);
    expect(m.deadlineMs).toBe(4_460);
  });

  it("a successful renewal answered exactly at its own deadline comes too late: the lease is lost", () => {
    const m = held();
    m.handle(timer(ShardLeaseTimer.Renew), 1_000);
    // sent at 1000, its validity ends at 4460 (the deadline timer is late here)
    const out = m.handle({ type: "acquire-result", sentAtMs: 1_000, token: 1 }, 4_460);
    expect(noLogs(out).at(-1)).toEqual({ type: "lost", reason: "the lease deadline passed" });
  });

  it("a deadline timer that fires before the (moved) deadline re-arms for the time left", () => {
    const m = held();
    m.handle(timer(ShardLeaseTimer.Renew), 1_000);
    m.handle({ type: "acquire-result", sentAtMs: 1_000, token: 1 }, 1_010);
    // the timer armed at the grant fires at 3460; the deadline is now 4460
    expect(m.handle(timer(ShardLeaseTimer.Deadline), 3_460)).toEqual([
      { type: "start-timer", key: ShardLeaseTimer.Deadline, delayMs: 1_000 },
    ]);
    expect(m.phase).toBe("held");
  });

  it("only the acquire-retry timer asks while acquiring, only the renew timer while held, never with a request in flight", () => {
    const m = new ShardLeaseMachine();
    m.handle({ type: "start" }, 0); // request in flight
    expect(m.handle(timer(ShardLeaseTimer.AcquireRetry), 1)).toEqual([]);
    m.handle({ type: "acquire-result", sentAtMs: 0, token: undefined }, 2);
    expect(m.handle(timer(ShardLeaseTimer.Renew), 3)).toEqual([]);
    expect(noLogs(m.handle(timer(ShardLeaseTimer.AcquireRetry), 502))).toEqual([
      { type: "acquire", sentAtMs: 502, renewal: false },
    ]);
    m.handle({ type: "acquire-result", sentAtMs: 502, token: 1 }, 503);
    expect(m.handle(timer(ShardLeaseTimer.AcquireRetry), 504)).toEqual([]);
    expect(m.handle(timer(ShardLeaseTimer.Renew), 1_503)).toEqual([
      { type: "acquire", sentAtMs: 1_503, renewal: true },
    ]);
    expect(m.handle(timer(ShardLeaseTimer.Renew), 1_504)).toEqual([]); // one in flight
  });

  it("an unknown timer is ignored, saying so at debug level", () => {
    expect(held().handle(timer("bogus"), 1)).toEqual([
      { type: "log", level: "debug", text: "unknown lease timer bogus ignored" },
    ]);
  });

  it("release reaches the store only when the lease is held or a request could still grant it", () => {
    // never started: nothing to give up
    expect(noLogs(new ShardLeaseMachine().handle({ type: "release" }, 0))).not.toContainEqual({
      type: "release",
    });
    // acquiring, refused, no request in flight
    const refused = new ShardLeaseMachine();
    refused.handle({ type: "start" }, 0);
    refused.handle({ type: "acquire-result", sentAtMs: 0, token: undefined }, 1);
    expect(refused.handle({ type: "release" }, 2)).not.toContainEqual({ type: "release" });
    // held, no request in flight
    expect(held().handle({ type: "release" }, 5).at(-1)).toEqual({ type: "release" });
  });

  it("after the lease is lost, a release and a late deadline timer change nothing", () => {
    const m = held();
    m.handle(timer(ShardLeaseTimer.Deadline), 3_460);
    expect(m.handle({ type: "release" }, 3_461)).toEqual([]);
    expect(m.phase).toBe("lost");
    const r = held();
    r.handle({ type: "release" }, 1);
    expect(r.handle(timer(ShardLeaseTimer.Deadline), 3_460)).toEqual([]);
    expect(r.phase).toBe("released");
  });
});
