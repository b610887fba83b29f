/** Split Brain Resolver settings: defaults, nested overrides, required parameters, derived bound. */
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/base/errors.js";
import { downingStrategyOf } from "../../../src/core/downing/downing-strategy.js";
import {
  DEFAULT_SBR_SETTINGS,
  downAllWhenUnstableMsOf,
  resolveSbrSettings,
} from "../../../src/core/downing/sbr-settings.js";

function configKey(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (e instanceof ConfigError) return e.key;
    throw e;
  }
  throw new Error("expected a ConfigError");
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
});
