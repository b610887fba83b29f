/** Cluster membership settings: defaults, overrides, and validation errors naming the key. */
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/base/errors.js";
import {
  DEFAULT_CLUSTER_SETTINGS,
  isWeaklyUpAllowed,
  resolveClusterSettings,
} from "../../../src/core/membership/cluster-settings.js";

function configError(f: () => unknown): ConfigError {
  try {
    f();
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error("expected a ConfigError");
}

describe("cluster settings", () => {
  it("has the documented defaults", () => {
    const s = resolveClusterSettings();
    expect(s).toEqual(DEFAULT_CLUSTER_SETTINGS);
    expect(s).toMatchObject({
      gossipIntervalMs: 1000,
      gossipTimeToLiveMs: 2000,
      gossipDifferentViewProbability: 0.8,
      reduceGossipDifferentViewProbabilityAboveMembers: 400,
      leaderActionsIntervalMs: 1000,
      unreachableNodesReaperIntervalMs: 1000,
      periodicTasksInitialDelayMs: 1000,
      seedNodeTimeoutMs: 5000,
      retryUnsuccessfulJoinAfterMs: 10_000,
      minNrOfMembers: 1,
      roleMinNrOfMembers: {},
      allowWeaklyUpMembersMs: 7000,
      heartbeatIntervalMs: 1000,
      monitoredByNrOfMembers: 9,
      expectedResponseAfterMs: 1000,
      downRemovalMarginMs: 0,
    });
    expect(isWeaklyUpAllowed(s)).toBe(true);
    expect(Object.isFrozen(s)).toBe(true);
  });

  it("applies overrides; 0 turns weakly-up and join retry off", () => {
    const s = resolveClusterSettings({
      minNrOfMembers: 3,
      roleMinNrOfMembers: { backend: 2 },
      allowWeaklyUpMembersMs: 0,
      retryUnsuccessfulJoinAfterMs: 0,
    });
    expect([s.minNrOfMembers, s.roleMinNrOfMembers, isWeaklyUpAllowed(s)]).toEqual([
      3,
      { backend: 2 },
      false,
    ]);
  });

  it("rejects invalid values with a ConfigError naming the key", () => {
    expect(configError(() => resolveClusterSettings({ gossipIntervalMs: 0 })).key).toBe(
      "cluster.gossipIntervalMs",
    );
    expect(configError(() => resolveClusterSettings({ minNrOfMembers: 0 })).key).toBe(
      "cluster.minNrOfMembers",
    );
    expect(
      configError(() => resolveClusterSettings({ gossipDifferentViewProbability: 1.5 })).key,
    ).toBe("cluster.gossipDifferentViewProbability");
    expect(
      configError(() => resolveClusterSettings({ roleMinNrOfMembers: { backend: 0 } })).key,
    ).toBe("cluster.roleMinNrOfMembers.backend");
    expect(configError(() => resolveClusterSettings({ roleMinNrOfMembers: { "": 1 } })).key).toBe(
      "cluster.roleMinNrOfMembers",
    );
    expect(
      configError(() =>
        resolveClusterSettings({ gossipIntervalMillis: 5 } as unknown as Record<string, number>),
      ).key,
    ).toBe("cluster.gossipIntervalMillis");
  });
});
