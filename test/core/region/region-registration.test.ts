/**
 * The region's registration bookkeeping on its own (src/core/region/region-registration.ts):
 * one known coordinator incarnation, registered only once it acknowledged, attempts backing
 * off and restarting per incarnation, and the rate-limited not-registered warning with its
 * likely causes for every combination of proxy, role and coordinator role. The region
 * scripts show two of these texts in context; this pins each rule and text.
 */
import { describe, expect, it } from "vitest";
import { BufferLevelWarning } from "../../../src/core/region/buffer-level-warning.js";
import {
  RegionRegistration,
  type RegistrationContext,
} from "../../../src/core/region/region-registration.js";
import { DEFAULT_REGION_SETTINGS } from "../../../src/core/region/region-settings.js";
import { ShardBuffers } from "../../../src/core/region/shard-buffers.js";

const settings = { ...DEFAULT_REGION_SETTINGS, warnIntervalMs: 1_000 };
const ctx = (over: Partial<RegistrationContext> = {}): RegistrationContext => ({
  typeName: "Cart",
  role: undefined,
  proxy: false,
  bufferedMessages: 3,
  ...over,
});

describe("RegionRegistration", () => {
  it("registers only on the current coordinator's ack, once", () => {
    const r = new RegionRegistration(settings);
    expect(r.coordinator).toBeUndefined();
    expect(r.registered).toBe(false);
    expect(r.ack("C1")).toBe(false); // no coordinator known
    expect(r.change("C1", 0)).toBe(true);
    expect(r.coordinator).toBe("C1");
    expect(r.change("C1", 5)).toBe(false); // the same one
    expect(r.ack("C0")).toBe(false); // an older incarnation
    expect(r.registered).toBe(false);
    expect(r.ack("C1")).toBe(true);
    expect(r.registered).toBe(true);
    expect(r.ack("C1")).toBe(false); // already registered
    expect(r.change(undefined, 10)).toBe(true);
    expect(r.registered).toBe(false);
    expect(r.coordinator).toBeUndefined();
  });

  it("backs off from the minimum per attempt and starts over with a new coordinator", () => {
    const r = new RegionRegistration(DEFAULT_REGION_SETTINGS);
    r.change("C1", 0);
    expect([r.nextDelayMs(), r.nextDelayMs(), r.nextDelayMs()]).toEqual([100, 200, 400]);
    r.change("C1", 0); // same: no reset
    expect(r.nextDelayMs()).toBe(800);
    r.change("C2", 0);
    expect([r.nextDelayMs(), r.nextDelayMs()]).toEqual([100, 200]);
  });

  it("warns first after warnIntervalMs unregistered, then at most once per interval", () => {
    const r = new RegionRegistration(settings);
    r.begin(500);
    expect(r.warning(1_499, ctx())).toBeUndefined();
    expect(r.warning(1_500, ctx())).toMatch(/has no coordinator for 1000 ms/);
    expect(r.warning(2_499, ctx())).toBeUndefined();
    expect(r.warning(2_500, ctx())).toMatch(/has no coordinator for 2000 ms/);
    r.change("C1", 2_600);
    expect(r.warning(3_000, ctx())).toBeUndefined(); // still within the interval
    expect(r.warning(3_500, ctx())).toMatch(/not registered with coordinator C1 after 3000 ms/);
    r.ack("C1");
    expect(r.warning(10_000, ctx())).toBeUndefined(); // registered: silent
  });

  it("restarts the clock and the rate limit when it loses a registered coordinator", () => {
    const r = new RegionRegistration(settings);
    r.begin(0);
    expect(r.warning(1_000, ctx())).toBeDefined();
    r.change("C1", 1_100);
    r.ack("C1");
    r.change("C2", 5_000); // failover: unregistered since 5000, may warn again at once later
    expect(r.warning(5_999, ctx())).toBeUndefined();
    expect(r.warning(6_000, ctx())).toBe(
      'region of "Cart" is not registered with coordinator C2 after 1000 ms since the previous ' +
        "coordinator went away (failover in progress?); 3 message(s) buffered",
    );
    r.change(undefined, 6_100); // not registered: the clock keeps running from 5000
    expect(r.warning(7_000, ctx())).toBe(
      'region of "Cart" has no coordinator for 2000 ms since the previous coordinator went ' +
        "away (failover in progress?); 3 message(s) buffered",
    );
  });

  it("rounds the time it reports", () => {
    const r = new RegionRegistration(settings);
    r.begin(0.4);
    expect(r.warning(1_000.6, ctx())).toMatch(/for 1000 ms;/);
  });

  it("names the likely causes without a coordinator: no role means any member", () => {
    const r = new RegionRegistration(settings);
    r.begin(0);
    expect(r.warning(1_000, ctx())).toBe(
      'region of "Cart" has no coordinator for 1000 ms; 3 message(s) buffered; likely causes: ' +
        "this node has not joined a cluster (seed nodes configured and reachable?); " +
        "no member that may run the coordinator is up (it runs on any member); " +
        'sharding for "Cart" is not started on the oldest member, where the coordinator runs',
    );
  });

  it("names the coordinator's role when it differs from the region's, and says proxy", () => {
    const r = new RegionRegistration(settings);
    r.begin(0);
    expect(r.warning(1_000, ctx({ proxy: true, role: "web", coordinatorRole: "worker" }))).toBe(
      'proxy of "Cart" has no coordinator for 1000 ms; 3 message(s) buffered; likely causes: ' +
        "this node has not joined a cluster (seed nodes configured and reachable?); " +
        'no member that may run the coordinator is up (it runs on members with role "worker"); ' +
        'sharding for "Cart" is not started on the oldest member with role "worker", where the ' +
        "coordinator runs",
    );
  });

  it("with a coordinator: the role cause only for a region with a role, not for a proxy", () => {
    const withRole = new RegionRegistration(settings);
    withRole.begin(0);
    withRole.change("C1", 0);
    expect(withRole.warning(1_000, ctx({ role: "worker" }))).toBe(
      'region of "Cart" is not registered with coordinator C1 after 1000 ms; 3 message(s) ' +
        'buffered; likely causes: sharding for "Cart" is not started on the coordinator\'s node; ' +
        'this node lacks the role "worker" (regions register only there; start a proxy on other ' +
        "nodes); this node is not up yet (joining or weakly-up)",
    );
    const proxy = new RegionRegistration(settings);
    proxy.begin(0);
    proxy.change("C1", 0);
    expect(proxy.warning(1_000, ctx({ role: "worker", proxy: true }))).toBe(
      'proxy of "Cart" is not registered with coordinator C1 after 1000 ms; 3 message(s) ' +
        'buffered; likely causes: sharding for "Cart" is not started on the coordinator\'s node; ' +
        "this node is not up yet (joining or weakly-up)",
    );
    const noRole = new RegionRegistration(settings);
    noRole.begin(0);
    noRole.change("C1", 0);
    expect(noRole.warning(1_000, ctx())).not.toContain("lacks the role");
  });
});

describe("ShardBuffers details", () => {
  it("answers size, membership and predicates per shard; an empty prepend creates nothing", () => {
    const b = new ShardBuffers<string>();
    expect(b.sizeOf("1")).toBe(0);
    expect(b.some(() => true)).toBe(false);
    b.prepend("1", []);
    expect(b.has("1")).toBe(false);
    expect(b.total).toBe(0);
    b.prepend("2", [
      { entityId: "e", message: "a" },
      { entityId: "e", message: "b" },
    ]);
    b.push("3", { entityId: "f", message: "c" });
    expect(b.has("2")).toBe(true);
    expect(b.total).toBe(3);
    expect(b.sizeOf("2")).toBe(2);
    expect(b.shards()).toEqual(["2", "3"]);
    expect(b.some((s) => s === "3")).toBe(true);
    expect(b.some((s) => s === "4")).toBe(false);
    expect(b.take("2").map((e) => e.message)).toEqual(["a", "b"]);
    expect(b.total).toBe(1);
  });
});

describe("BufferLevelWarning details", () => {
  it("rounds thresholds up, at least 1 message", () => {
    const w = new BufferLevelWarning(15, 1_000); // 1.5, 7.5, 13.5 -> 2, 8, 14
    expect(w.onGrown(1, 0)).toBeUndefined();
    expect(w.onGrown(2, 0)).toEqual({ level: "warn", percent: 10 });
    expect(w.onGrown(7, 0)).toBeUndefined();
    expect(w.onGrown(8, 0)).toEqual({ level: "warn", percent: 50 });
    expect(w.onGrown(13, 0)).toBeUndefined();
    expect(w.onGrown(14, 0)).toEqual({ level: "error", percent: 90 });
    const tiny = new BufferLevelWarning(1, 1_000);
    expect(tiny.onGrown(1, 0)).toEqual({ level: "error", percent: 90 });
  });

  it("a level already reported stays quiet after emptying within the interval", () => {
    const w = new BufferLevelWarning(10, 1_000);
    expect(w.onGrown(5, 100)?.percent).toBe(50);
    w.onEmpty();
    expect(w.onGrown(5, 1_099)).toBeUndefined();
    expect(w.onGrown(9, 1_099)?.percent).toBe(90); // a higher level always reports
    w.onEmpty();
    expect(w.onGrown(1, 2_099)?.percent).toBe(10);
  });
});
