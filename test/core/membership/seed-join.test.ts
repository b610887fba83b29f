/**
 * The seed-join machine input by input (src/core/membership/seed-join.ts): the exact
 * outputs and phases of the first seed and of every other node, the timers each starts
 * and cancels, and the inputs each phase ignores. The fast-check simulation of many
 * machines (seed-join-simulation.test.ts) checks that they form one cluster; this file
 * pins what a single machine does.
 */
import { describe, expect, it } from "vitest";
import { AssertionError } from "../../../src/base/assert.js";
import { type Address, addressOf } from "../../../src/core/membership/address.js";
import {
  type SeedJoinConfig,
  SeedJoinMachine,
  SeedJoinTimer,
} from "../../../src/core/membership/seed-join.js";

const addr = (host: string) => addressOf("shardkit", "sys", host, 2552);
const [a, b, c, x] = [addr("a"), addr("b"), addr("c"), addr("x")] as const;

const config = (self: Address, overrides: Partial<SeedJoinConfig> = {}): SeedJoinConfig => ({
  self,
  seedNodes: [a, b, c],
  seedNodeTimeoutMs: 5000,
  seedNodeInitJoinResendIntervalMs: 1000,
  retryUnsuccessfulJoinAfterMs: 10_000,
  ...overrides,
});

const timeout = (timer: SeedJoinTimer) => ({ type: "timeout", timer }) as const;
const ack = (from: Address) => ({ type: "init-join-ack", from }) as const;
const nack = (from: Address) => ({ type: "init-join-nack", from }) as const;
const welcome = (from: Address) => ({ type: "welcome", from }) as const;
const start = { type: "start" } as const;

describe("seed-join machine", () => {
  it("refuses an empty seed list and non-positive intervals", () => {
    const refused = (overrides: Partial<SeedJoinConfig>, message: string) => {
      const f = () => new SeedJoinMachine(config(a, overrides));
      expect(f).toThrow(AssertionError);
      expect(f).toThrow(message);
    };
    refused({ seedNodes: [] }, "seed join needs at least one seed node");
    refused({ seedNodeTimeoutMs: 0 }, "seedNodeTimeoutMs must be > 0");
    refused({ seedNodeInitJoinResendIntervalMs: 0 }, "resend interval must be > 0");
    // the smallest positive values are accepted
    expect(
      () =>
        new SeedJoinMachine(
          config(a, { seedNodeTimeoutMs: 1, seedNodeInitJoinResendIntervalMs: 1 }),
        ),
    ).not.toThrow();
  });

  it("only the first configured seed is the first seed", () => {
    expect(new SeedJoinMachine(config(a)).isFirstSeed).toBe(true);
    expect(new SeedJoinMachine(config(b)).isFirstSeed).toBe(false);
    expect(new SeedJoinMachine(config(x)).isFirstSeed).toBe(false);
    expect(new SeedJoinMachine(config(a)).phase).toEqual({ type: "idle" });
  });

  it("the first seed probes the other seeds once each, with both timers", () => {
    const m = new SeedJoinMachine(config(a, { seedNodes: [a, b, a, c, b] }));
    expect(m.handle(start)).toEqual([
      { type: "send-init-join", to: [b, c] },
      { type: "start-timer", timer: SeedJoinTimer.SeedNodeTimeout, delayMs: 5000 },
      { type: "start-timer", timer: SeedJoinTimer.InitJoinResend, delayMs: 1000 },
    ]);
    expect(m.phase).toEqual({ type: "first-seed-probing", remaining: [b, c] });
    expect(m.handle(start)).toEqual([]);
  });

  it("the first seed re-sends to the seeds that have not nacked, and joins itself when all nacked", () => {
    const m = new SeedJoinMachine(config(a));
    m.handle(start);
    expect(m.handle(nack(b))).toEqual([]);
    expect(m.phase).toEqual({ type: "first-seed-probing", remaining: [c] });
    expect(m.handle(timeout(SeedJoinTimer.InitJoinResend))).toEqual([
      { type: "send-init-join", to: [c] },
      { type: "start-timer", timer: SeedJoinTimer.InitJoinResend, delayMs: 1000 },
    ]);
    expect(m.handle(nack(c))).toEqual([
      { type: "cancel-timer", timer: SeedJoinTimer.SeedNodeTimeout },
      { type: "cancel-timer", timer: SeedJoinTimer.InitJoinResend },
      { type: "join-self" },
      { type: "joined", via: a },
    ]);
    expect(m.phase).toEqual({ type: "joined", via: a });
    // joined: every further input is ignored
    expect(m.handle(nack(b))).toEqual([]);
    expect(m.handle(ack(b))).toEqual([]);
    expect(m.handle(timeout(SeedJoinTimer.InitJoinResend))).toEqual([]);
    expect(m.handle(timeout(SeedJoinTimer.SeedNodeTimeout))).toEqual([]);
    expect(m.handle(timeout(SeedJoinTimer.JoinRetry))).toEqual([]);
    expect(m.handle(welcome(b))).toEqual([]);
  });

  it("the first seed joins itself when the seed-node timeout passes without an ack", () => {
    const m = new SeedJoinMachine(config(a));
    m.handle(start);
    expect(m.handle(timeout(SeedJoinTimer.SeedNodeTimeout))).toEqual([
      { type: "cancel-timer", timer: SeedJoinTimer.InitJoinResend },
      { type: "join-self" },
      { type: "joined", via: a },
    ]);
  });

  it("a lone first seed joins itself at once, starting no timer", () => {
    const m = new SeedJoinMachine(config(a, { seedNodes: [a, a] }));
    expect(m.handle(start)).toEqual([{ type: "join-self" }, { type: "joined", via: a }]);
    expect(m.phase).toEqual({ type: "joined", via: a });
  });

  it("the first seed joins the first seed that acks, cancelling both timers", () => {
    const m = new SeedJoinMachine(config(a));
    m.handle(start);
    expect(m.handle(ack(c))).toEqual([
      { type: "cancel-timer", timer: SeedJoinTimer.SeedNodeTimeout },
      { type: "cancel-timer", timer: SeedJoinTimer.InitJoinResend },
      { type: "send-join", to: c },
      { type: "start-timer", timer: SeedJoinTimer.JoinRetry, delayMs: 10_000 },
    ]);
    expect(m.phase).toEqual({ type: "joining", to: c });
    // while joining: a second ack, nacks and the probing timers are ignored
    expect(m.handle(ack(b))).toEqual([]);
    expect(m.handle(nack(b))).toEqual([]);
    expect(m.handle(timeout(SeedJoinTimer.SeedNodeTimeout))).toEqual([]);
    expect(m.handle(timeout(SeedJoinTimer.InitJoinResend))).toEqual([]);
    expect(m.phase).toEqual({ type: "joining", to: c });
  });

  it("another node probes every seed but itself and retries each seed-node timeout", () => {
    const m = new SeedJoinMachine(config(b));
    expect(m.handle(start)).toEqual([
      { type: "send-init-join", to: [a, c] },
      { type: "start-timer", timer: SeedJoinTimer.SeedNodeTimeout, delayMs: 5000 },
    ]);
    expect(m.phase).toEqual({ type: "probing", attempt: 1 });
    // nacks and the resend timer do not concern it
    expect(m.handle(nack(a))).toEqual([]);
    expect(m.handle(nack(c))).toEqual([]);
    expect(m.handle(timeout(SeedJoinTimer.InitJoinResend))).toEqual([]);
    expect(m.handle(timeout(SeedJoinTimer.JoinRetry))).toEqual([]);
    expect(m.phase).toEqual({ type: "probing", attempt: 1 });
    expect(m.handle(timeout(SeedJoinTimer.SeedNodeTimeout))).toEqual([
      { type: "send-init-join", to: [a, c] },
      { type: "start-timer", timer: SeedJoinTimer.SeedNodeTimeout, delayMs: 5000 },
    ]);
    expect(m.phase).toEqual({ type: "probing", attempt: 2 });
    m.handle(timeout(SeedJoinTimer.SeedNodeTimeout));
    expect(m.phase).toEqual({ type: "probing", attempt: 3 });
  });

  it("before start every input is ignored", () => {
    const m = new SeedJoinMachine(config(x));
    expect(m.handle(ack(a))).toEqual([]);
    expect(m.handle(nack(a))).toEqual([]);
    expect(m.handle(timeout(SeedJoinTimer.SeedNodeTimeout))).toEqual([]);
    expect(m.handle(welcome(a))).toEqual([]);
    expect(m.phase).toEqual({ type: "idle" });
  });

  it("another node joins the acking seed, is welcomed only by it, and starts over without a welcome", () => {
    const m = new SeedJoinMachine(config(x));
    m.handle(start);
    expect(m.handle(ack(b))).toEqual([
      { type: "cancel-timer", timer: SeedJoinTimer.SeedNodeTimeout },
      { type: "send-join", to: b },
      { type: "start-timer", timer: SeedJoinTimer.JoinRetry, delayMs: 10_000 },
    ]);
    expect(m.handle(welcome(a))).toEqual([]);
    expect(m.phase).toEqual({ type: "joining", to: b });
    // no welcome in time: probing again from the first attempt
    expect(m.handle(timeout(SeedJoinTimer.JoinRetry))).toEqual([
      { type: "send-init-join", to: [a, b, c] },
      { type: "start-timer", timer: SeedJoinTimer.SeedNodeTimeout, delayMs: 5000 },
    ]);
    expect(m.phase).toEqual({ type: "probing", attempt: 1 });
    m.handle(ack(c));
    expect(m.handle(welcome(c))).toEqual([
      { type: "cancel-timer", timer: SeedJoinTimer.JoinRetry },
      { type: "joined", via: c },
    ]);
    expect(m.phase).toEqual({ type: "joined", via: c });
  });

  it("with retryUnsuccessfulJoinAfterMs 0 no join-retry timer is started or cancelled", () => {
    const m = new SeedJoinMachine(config(x, { retryUnsuccessfulJoinAfterMs: 0 }));
    m.handle(start);
    expect(m.handle(ack(a))).toEqual([
      { type: "cancel-timer", timer: SeedJoinTimer.SeedNodeTimeout },
      { type: "send-join", to: a },
    ]);
    expect(m.handle(welcome(a))).toEqual([{ type: "joined", via: a }]);
  });

  it("a first seed that joined another seed starts over as the first seed when no welcome comes", () => {
    const m = new SeedJoinMachine(config(a));
    m.handle(start);
    m.handle(ack(b));
    expect(m.handle(timeout(SeedJoinTimer.JoinRetry))).toEqual([
      { type: "send-init-join", to: [b, c] },
      { type: "start-timer", timer: SeedJoinTimer.SeedNodeTimeout, delayMs: 5000 },
      { type: "start-timer", timer: SeedJoinTimer.InitJoinResend, delayMs: 1000 },
    ]);
    expect(m.phase).toEqual({ type: "first-seed-probing", remaining: [b, c] });
  });
});
