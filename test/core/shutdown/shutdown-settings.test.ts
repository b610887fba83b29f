/** Settings of coordinated shutdown: defaults, overrides, and validation naming the key. */
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/base/errors.js";
import {
  BUILT_IN_PHASE_NAMES,
  isKnownShutdownReason,
  resolveShutdownSettings,
  ShutdownPhase,
  type ShutdownSettingsOverrides,
} from "../../../src/core/shutdown/index.js";

function configErrorOf(overrides: unknown): ConfigError {
  try {
    resolveShutdownSettings(overrides as ShutdownSettingsOverrides);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("shutdown settings", () => {
  it("defaults: Akka's phases, 5 s default, longer region/exiting/terminate, recover on, signals on", () => {
    const s = resolveShutdownSettings();
    expect(s.defaultPhaseTimeoutMs).toBe(5_000);
    expect(s.runOnSignals).toBe(true);
    expect(s.phases.map((p) => p.name)).toEqual(BUILT_IN_PHASE_NAMES);
    const timeouts = Object.fromEntries(s.phases.map((p) => [p.name, p.timeoutMs]));
    expect(timeouts[ShutdownPhase.ClusterShardingShutdownRegion]).toBe(10_000);
    expect(timeouts[ShutdownPhase.ClusterExiting]).toBe(10_000);
    expect(timeouts[ShutdownPhase.ActorSystemTerminate]).toBe(10_000);
    expect(timeouts[ShutdownPhase.ClusterLeave]).toBe(5_000);
    expect(s.phases.every((p) => p.recover && p.enabled)).toBe(true);
    expect(Object.isFrozen(s)).toBe(true);
  });

  it("defaultPhaseTimeoutMs applies to phases without a timeout of their own", () => {
    const s = resolveShutdownSettings({ defaultPhaseTimeoutMs: 1_000 });
    const byName = new Map(s.phases.map((p) => [p.name, p]));
    expect(byName.get(ShutdownPhase.ServiceUnbind)?.timeoutMs).toBe(1_000);
    expect(byName.get(ShutdownPhase.ClusterExiting)?.timeoutMs).toBe(10_000);
  });

  it("overrides merge per phase; a new phase gets the default timeout", () => {
    const s = resolveShutdownSettings({
      runOnSignals: false,
      phases: {
        "cluster-leave": { timeoutMs: 7_000, recover: false },
        "flush-metrics": { dependsOn: ["service-stop"] },
      },
    });
    expect(s.runOnSignals).toBe(false);
    const leave = s.phases.find((p) => p.name === "cluster-leave");
    expect(leave).toMatchObject({ timeoutMs: 7_000, recover: false, enabled: true });
    expect(leave?.dependsOn).toEqual(["cluster-sharding-shutdown-region"]);
    const flush = s.phases.find((p) => p.name === "flush-metrics");
    expect(flush).toMatchObject({ timeoutMs: 5_000, recover: true, dependsOn: ["service-stop"] });
  });

  it.each([
    [{ defaultPhaseTimeoutMs: 0 }, "shutdown.defaultPhaseTimeoutMs"],
    [{ defaultPhaseTimeoutMs: Number.NaN }, "shutdown.defaultPhaseTimeoutMs"],
    [{ runOnSignals: "yes" }, "shutdown.runOnSignals"],
    [{ signals: [] }, "shutdown.signals"],
    [{ phases: { "cluster-leave": { timeoutMs: -1 } } }, "shutdown.phases.cluster-leave.timeoutMs"],
    [{ phases: { "cluster-leave": { recover: 1 } } }, "shutdown.phases.cluster-leave.recover"],
    [{ phases: { "service-stop": { enabled: "no" } } }, "shutdown.phases.service-stop.enabled"],
    [{ phases: { "service-stop": { timeout: 5 } } }, "shutdown.phases.service-stop.timeout"],
    [{ phases: { mine: { dependsOn: "service-stop" } } }, "shutdown.phases.mine.dependsOn"],
    [{ phases: { mine: { dependsOn: ["nope"] } } }, "shutdown.phases.mine.dependsOn"],
    [{ phases: { "bad name": {} } }, "shutdown.phases.bad name"],
    [{ phases: { mine: 5 } }, "shutdown.phases.mine"],
    [
      { phases: { "before-service-unbind": { dependsOn: ["actor-system-terminate"] } } },
      "shutdown.phases.before-service-unbind.dependsOn",
    ],
  ])("rejects %j naming %s", (overrides, key) => {
    expect(configErrorOf(overrides).key).toBe(key);
  });

  it("a cycle error shows the cycle", () => {
    const e = configErrorOf({ phases: { a: { dependsOn: ["b"] }, b: { dependsOn: ["a"] } } });
    expect(e.code).toBe("CONFIG_INVALID");
    expect(e.value).toBe("a -> b -> a");
  });

  it("known reasons are recognised; application strings are not", () => {
    expect(isKnownShutdownReason("sigterm")).toBe(true);
    expect(isKnownShutdownReason("cluster-downing")).toBe(true);
    expect(isKnownShutdownReason("deploy")).toBe(false);
  });
});
