/**
 * Singleton settings: defaults, validation with ConfigError naming the key (R2), the
 * derived retry counts, and the default stuck error after exactly
 * minNumberOfHandOverRetries retries.
 */
import { describe, expect, it } from "vitest";
import { ConfigError, ShardkitError } from "../../../src/base/errors.js";
import { memberFrom } from "../../../src/core/membership/member.js";
import {
  DEFAULT_SINGLETON_MANAGER_SETTINGS,
  DEFAULT_SINGLETON_PROXY_SETTINGS,
  maxHandOverRetries,
  maxTakeOverRetries,
  resolveSingletonManagerSettings,
  resolveSingletonProxySettings,
  SingletonManagerMachine,
  SingletonManagerStuckError,
  SingletonProxyMachine,
  SingletonTimer,
} from "../../../src/core/singleton/index.js";
import { node } from "../script-runner.js";

function configErrorOf(f: () => unknown): ConfigError {
  try {
    f();
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error("expected a ConfigError");
}

describe("singleton settings", () => {
  it("has the documented defaults", () => {
    expect(resolveSingletonManagerSettings()).toEqual({
      handOverRetryIntervalMs: 1_000,
      minNumberOfHandOverRetries: 15,
      removalMarginMs: 0,
      leaseRetryIntervalMs: 5_000,
      takeOverFromUnreachable: false,
    });
    expect(resolveSingletonProxySettings()).toEqual({
      singletonIdentificationIntervalMs: 1_000,
      bufferSizeMax: 1_000,
      skipUnreachable: false,
    });
    expect(DEFAULT_SINGLETON_MANAGER_SETTINGS.handOverRetryIntervalMs).toBe(1_000);
    expect(DEFAULT_SINGLETON_PROXY_SETTINGS.bufferSizeMax).toBe(1_000);
  });

  it.each([
    ["handOverRetryIntervalMs", 0],
    ["handOverRetryIntervalMs", Number.NaN],
    ["minNumberOfHandOverRetries", 0],
    ["minNumberOfHandOverRetries", 2.5],
    ["removalMarginMs", -1],
    ["leaseRetryIntervalMs", "5s"],
    ["takeOverFromUnreachable", "yes"],
  ])("rejects manager %s=%s with a ConfigError naming the key", (k, v) => {
    const e = configErrorOf(() => resolveSingletonManagerSettings({ [k]: v }));
    expect(e.code).toBe("CONFIG_INVALID");
    expect(e.key).toBe(`singleton.${k}`);
  });

  it.each([
    ["singletonIdentificationIntervalMs", 0],
    ["bufferSizeMax", -1],
    ["bufferSizeMax", 1.5],
    ["skipUnreachable", 1],
  ])("rejects proxy %s=%s with a ConfigError naming the key", (k, v) => {
    const e = configErrorOf(() => resolveSingletonProxySettings({ [k]: v }));
    expect(e.key).toBe(`singleton.proxy.${k}`);
  });

  it("refuses the lease-guarded take-over without a lease, naming the setting", () => {
    const make = (useLease: boolean) =>
      new SingletonManagerMachine({
        self: node("a"),
        role: undefined,
        useLease,
        stopMessage: "stop",
        settings: { takeOverFromUnreachable: true },
      });
    expect(configErrorOf(() => make(false)).key).toBe("singleton.takeOverFromUnreachable");
    expect(make(true).settings.takeOverFromUnreachable).toBe(true);
  });

  it("rejects unknown keys, and the machines validate on construction", () => {
    const typo = { handOverRetryInterval: 5 } as never;
    expect(configErrorOf(() => resolveSingletonManagerSettings(typo)).key).toBe(
      "singleton.handOverRetryInterval",
    );
    expect(
      () =>
        new SingletonManagerMachine({
          self: node("a"),
          role: undefined,
          useLease: false,
          stopMessage: "stop",
          settings: { handOverRetryIntervalMs: -5 },
        }),
    ).toThrow(ConfigError);
    expect(
      () => new SingletonProxyMachine({ role: undefined, settings: { bufferSizeMax: -1 } }),
    ).toThrow(ConfigError);
  });

  it("derives the retry counts from the minimum and the removal margin", () => {
    const d = resolveSingletonManagerSettings();
    expect(maxHandOverRetries(d)).toBe(15);
    expect(maxTakeOverRetries(d)).toBe(12);
    const margin = resolveSingletonManagerSettings({ removalMarginMs: 20_000 });
    expect(maxHandOverRetries(margin)).toBe(23); // 20 intervals + 3 > 15
    expect(maxTakeOverRetries(margin)).toBe(20);
    const tiny = resolveSingletonManagerSettings({ minNumberOfHandOverRetries: 1 });
    expect(maxHandOverRetries(tiny)).toBe(3);
    expect(maxTakeOverRetries(tiny)).toBe(1);
  });
});

describe("stuck error with default settings", () => {
  it("comes after exactly 15 unanswered retries, typed, and the manager stays safe", () => {
    const m = new SingletonManagerMachine({
      self: node("b"),
      role: undefined,
      useLease: false,
      stopMessage: "stop",
    });
    const up = (n: string, upNumber: number, status: "up" | "leaving" = "up") =>
      memberFrom({ uniqueAddress: node(n), status, upNumber });
    m.handle({ type: "members", oldestFirst: [up("a", 1), up("b", 2)] });
    m.handle({ type: "members", oldestFirst: [up("a", 1, "leaving"), up("b", 2)] });
    expect(m.state).toBe("BecomingOldest");
    const fire = () => m.handle({ type: "timer", key: SingletonTimer.HandOverRetry });
    for (let i = 1; i <= 15; i++)
      expect(fire().filter((o) => o.type === "stuck-error")).toEqual([]);
    const out = fire();
    const stuck = out.find((o) => o.type === "stuck-error");
    expect(stuck?.type === "stuck-error" && stuck.error).toBeInstanceOf(SingletonManagerStuckError);
    if (stuck?.type !== "stuck-error") throw new Error("no stuck error");
    expect(stuck.error).toBeInstanceOf(ShardkitError);
    expect(stuck.error.code).toBe("SINGLETON_MANAGER_STUCK");
    expect(stuck.error.fields).toMatchObject({ phase: "hand-over", retries: 15 });
    expect(stuck.error.waitingFor).toEqual(["shardkit://sys@a:2552#1"]);
    expect(out.some((o) => o.type === "start-instance")).toBe(false);
    expect(out.filter((o) => o.type === "send")).toHaveLength(1); // keeps asking
    expect(m.snapshot).toMatchObject({ state: "BecomingOldest", instance: "none" });
    // And again, at the same cadence: 15 more retries, then the error.
    let again = 0;
    for (let i = 1; i <= 16; i++) again += fire().filter((o) => o.type === "stuck-error").length;
    expect(again).toBe(1);
  });
});
