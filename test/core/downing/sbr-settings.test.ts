/** Split Brain Resolver settings: defaults, nested overrides, required parameters, derived bound. */
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/base/errors.js";
import { downingStrategyOf } from "../../../src/core/downing/downing-strategy.js";
import {
  DEFAULT_SBR_SETTINGS,
  downAllWhenUnstableMsOf,
  resolveSbrSettings,
} from "../../../src/core/downing/sbr-settings.js";

function configError(f: () => unknown): ConfigError {
  try {
    f();
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error("expected a ConfigError");
}

function configKey(f: () => unknown): string {
  return configError(f).key;
}

/** The key and the allowed values a bad override is rejected with. */
function rejected(overrides: unknown): [string, string] {
  const e = configError(() =>
    resolveSbrSettings(overrides as Parameters<typeof resolveSbrSettings>[0]),
  );
  return [e.key, e.allowed];
}

describe("sbr settings", () => {
  it("defaults to keep-majority, 20 s stable-after, down-all-when-unstable on (15 s)", () => {
    const s = resolveSbrSettings();
    expect(s).toEqual(DEFAULT_SBR_SETTINGS);
    expect([s.activeStrategy, s.stableAfterMs, s.downAllWhenUnstable]).toEqual([
      "keep-majority",
      20_000,
      "on",
    ]);
    expect(downAllWhenUnstableMsOf(s)).toBe(15_000);
    expect(s.keepOldest.downIfAlone).toBe(true);
    expect(s.leaseMajority.acquireLeaseDelayForMinorityMs).toBe(2000);
    expect(downingStrategyOf(s)).toEqual({ type: "keep-majority", role: undefined });
  });

  it("derives the down-all bound from stable-after with a 4 s floor, or takes it as given", () => {
    expect(downAllWhenUnstableMsOf(resolveSbrSettings({ stableAfterMs: 4000 }))).toBe(4000);
    expect(downAllWhenUnstableMsOf(resolveSbrSettings({ stableAfterMs: 60_000 }))).toBe(45_000);
    expect(downAllWhenUnstableMsOf(resolveSbrSettings({ downAllWhenUnstable: "off" }))).toBe(0);
    expect(downAllWhenUnstableMsOf(resolveSbrSettings({ downAllWhenUnstable: 7000 }))).toBe(7000);
  });

  it("merges nested overrides key by key", () => {
    const s = resolveSbrSettings({
      activeStrategy: "keep-oldest",
      keepOldest: { role: "singleton-host" },
    });
    expect(s.keepOldest).toEqual({ downIfAlone: true, role: "singleton-host" });
    expect(downingStrategyOf(s)).toEqual({
      type: "keep-oldest",
      downIfAlone: true,
      role: "singleton-host",
    });
    const q = resolveSbrSettings({
      activeStrategy: "static-quorum",
      staticQuorum: { quorumSize: 3 },
    });
    expect(downingStrategyOf(q)).toEqual({ type: "static-quorum", quorumSize: 3, role: undefined });
    const l = resolveSbrSettings({
      activeStrategy: "lease-majority",
      leaseMajority: { leaseImplementation: "kubernetes", acquireLeaseDelayForMinorityMs: 500 },
    });
    expect(downingStrategyOf(l)).toEqual({
      type: "lease-majority",
      acquireLeaseDelayForMinorityMs: 500,
      role: undefined,
    });
    expect(downingStrategyOf(resolveSbrSettings({ activeStrategy: "down-all" }))).toEqual({
      type: "down-all",
    });
  });

  it("requires the parameters of the active strategy and validates every key", () => {
    expect(configKey(() => resolveSbrSettings({ activeStrategy: "static-quorum" }))).toBe(
      "sbr.staticQuorum.quorumSize",
    );
    expect(configKey(() => resolveSbrSettings({ activeStrategy: "lease-majority" }))).toBe(
      "sbr.leaseMajority.leaseImplementation",
    );
    expect(
      configKey(() => resolveSbrSettings({ activeStrategy: "keep-everyone" as "down-all" })),
    ).toBe("sbr.activeStrategy");
    expect(configKey(() => resolveSbrSettings({ stableAfterMs: 0 }))).toBe("sbr.stableAfterMs");
    expect(configKey(() => resolveSbrSettings({ downAllWhenUnstable: "maybe" as "on" }))).toBe(
      "sbr.downAllWhenUnstable",
    );
    expect(configKey(() => resolveSbrSettings({ keepMajority: { role: "" } }))).toBe(
      "sbr.keepMajority.role",
    );
    expect(
      configKey(() =>
        resolveSbrSettings({
          keepOldest: { downIfAlonee: true } as unknown as { downIfAlone: boolean },
        }),
      ),
    ).toBe("sbr.keepOldest.downIfAlonee");
  });

  it("rejects each kind of bad value, saying what is allowed", () => {
    const positive = "a duration in milliseconds > 0";
    for (const v of [0, -1, Number.POSITIVE_INFINITY, Number.NaN, "5000"])
      expect(rejected({ stableAfterMs: v })).toEqual(["sbr.stableAfterMs", positive]);
    expect(rejected({ autoDown: { afterMs: Number.POSITIVE_INFINITY } })).toEqual([
      "sbr.autoDown.afterMs",
      positive,
    ]);
    expect(rejected({ leaseMajority: { releaseAfterMs: 0 } })).toEqual([
      "sbr.leaseMajority.releaseAfterMs",
      positive,
    ]);
    for (const v of [0, -5, Number.POSITIVE_INFINITY, "15000", true])
      expect(rejected({ downAllWhenUnstable: v })).toEqual([
        "sbr.downAllWhenUnstable",
        `"on", "off" or a duration in milliseconds > 0`,
      ]);
    for (const v of [null, 5, "keep"])
      expect(rejected({ keepMajority: v })).toEqual(["sbr.keepMajority", "a settings object"]);
    for (const v of ["", 7])
      expect(rejected({ keepOldest: { role: v } })).toEqual([
        "sbr.keepOldest.role",
        "a non-empty role name or undefined",
      ]);
    expect(rejected({ leaseMajority: { leaseImplementation: 5 } })).toEqual([
      "sbr.leaseMajority.leaseImplementation",
      "a string",
    ]);
    expect(rejected({ activeStrategy: "static-quorum", staticQuorum: { quorumSize: 0 } })).toEqual([
      "sbr.staticQuorum.quorumSize",
      "an integer >= 1 when static-quorum is the active strategy",
    ]);
    expect(rejected({ activeStrategy: "lease-majority" })).toEqual([
      "sbr.leaseMajority.leaseImplementation",
      "a lease implementation name when lease-majority is the active strategy",
    ]);
    // The prefix names the keys as the caller knows them.
    expect(configKey(() => resolveSbrSettings({ stableAfterMs: 0 }, "downing."))).toBe(
      "downing.stableAfterMs",
    );
  });

  it("accepts a role, a lease name and a quorum size where the strategy needs none", () => {
    const s = resolveSbrSettings({
      keepMajority: { role: "worker" },
      leaseMajority: { leaseImplementation: "sqlite" },
      staticQuorum: { quorumSize: 0 },
    });
    expect(s.keepMajority.role).toBe("worker");
    expect(s.leaseMajority.leaseImplementation).toBe("sqlite");
    expect(downingStrategyOf(resolveSbrSettings({ activeStrategy: "auto-down" }))).toEqual({
      type: "auto-down",
    });
  });

  it("accepts a quorum size of 1 for static-quorum (the smallest valid)", () => {
    const s = resolveSbrSettings({
      activeStrategy: "static-quorum",
      staticQuorum: { quorumSize: 1 },
    });
    expect(downingStrategyOf(s)).toEqual({ type: "static-quorum", quorumSize: 1, role: undefined });
  });

  it("derives the down-all bound as 3/4 of stable-after, never below 4 s", () => {
    expect(downAllWhenUnstableMsOf(resolveSbrSettings({ stableAfterMs: 5333 }))).toBe(4000);
    expect(downAllWhenUnstableMsOf(resolveSbrSettings({ stableAfterMs: 5336 }))).toBe(4002);
    expect(downAllWhenUnstableMsOf(resolveSbrSettings({ stableAfterMs: 1000 }))).toBe(4000);
  });
});
