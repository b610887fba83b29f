/**
 * Auto-down's tracker (core/downing/auto-down.ts, docs/cluster.md "Auto-down"): the
 * leader downs a member that has been unreachable for autoDown.afterMs, each on its own
 * clock. The partition consequence is test/cluster/auto-down.sim.test.ts.
 */
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/base/errors.js";
import { AutoDownTracker } from "../../../src/core/downing/auto-down.js";
import { resolveSbrSettings } from "../../../src/core/downing/sbr-settings.js";
import type { Member } from "../../../src/core/membership/member.js";

const member = (host: string, status: Member["status"] = "up", uid = 1): Member =>
  ({
    uniqueAddress: { address: { protocol: "shardkit", system: "s", host, port: 2552 }, uid },
    status,
    roles: [],
    upNumber: 1,
    appVersion: "1.0.0",
  }) as unknown as Member;

describe("AutoDownTracker", () => {
  it("downs a member only after afterMs of continuous unreachability, in address order", () => {
    const t = new AutoDownTracker();
    t.observe([member("c"), member("b")], 1_000);
    expect(t.due(5_999, 5_000)).toEqual([]);
    expect(t.due(6_000, 5_000).map((m) => m.uniqueAddress.address.host)).toEqual(["b", "c"]);
  });

  it("restarts the wait of a member that came back, and skips members already down", () => {
    const t = new AutoDownTracker();
    t.observe([member("b")], 0);
    t.observe([], 3_000);
    t.observe([member("b")], 4_000);
    expect(t.due(8_000, 5_000)).toEqual([]);
    expect(t.due(9_000, 5_000)).toHaveLength(1);
    t.observe([member("b", "down")], 9_500);
    expect(t.due(20_000, 5_000)).toEqual([]);
    expect(t.unreachableForMs(member("b"), 10_000)).toBe(6_000);
    expect(t.unreachableForMs(member("x"), 10_000)).toBeUndefined();
  });

  it("a new incarnation (another uid) is another member", () => {
    const t = new AutoDownTracker();
    t.observe([member("b", "up", 1)], 0);
    t.observe([member("b", "up", 2)], 4_000);
    expect(t.due(6_000, 5_000)).toEqual([]);
  });

  it("is opt-in: not the default, afterMs validated", () => {
    expect(resolveSbrSettings().activeStrategy).toBe("keep-majority");
    expect(resolveSbrSettings({ activeStrategy: "auto-down" }).autoDown.afterMs).toBe(10_000);
    expect(() =>
      resolveSbrSettings({ activeStrategy: "auto-down", autoDown: { afterMs: 0 } }),
    ).toThrow(ConfigError);
  });

  it("lists due members in address order whatever order they were seen in", () => {
    const t = new AutoDownTracker();
    t.observe([member("d"), member("a"), member("c"), member("b"), member("e")], 0);
    expect(t.due(5_000, 5_000).map((m) => m.uniqueAddress.address.host)).toEqual([
      "a",
      "b",
      "c",
      "d",
      "e",
    ]);
  });
});
