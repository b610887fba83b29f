/**
 * The coordinator's durable state: event application, lenient replay of a batch written
 * twice, corruption detection, snapshots; and the protocol's shape guards.
 */
import { describe, expect, it } from "vitest";
import {
  CoordinatorState,
  recoverCoordinatorState,
} from "../../../src/core/coordinator/coordinator-state.js";
import {
  type CoordinatorEvent,
  isCoordinatorCommand,
  isCoordinatorEvent,
  isRegionCommand,
} from "../../../src/protocol/sharding.js";

const base: CoordinatorEvent[] = [
  { type: "shard-region-registered", region: "A", member: "a" },
  { type: "shard-region-registered", region: "B", member: "b" },
  { type: "shard-region-proxy-registered", proxy: "P", member: "c" },
  { type: "shard-home-allocated", shard: "1", region: "A" },
  { type: "shard-home-allocated", shard: "2", region: "A" },
  { type: "shard-home-allocated", shard: "3", region: "B" },
];

describe("CoordinatorState", () => {
  it("keeps shards per region in allocation order and regions in registration order", () => {
    const s = recoverCoordinatorState(undefined, base, false);
    expect(s.toSnapshot()).toEqual({
      regions: [
        { region: "A", member: "a", shards: ["1", "2"] },
        { region: "B", member: "b", shards: ["3"] },
      ],
      proxies: [{ proxy: "P", member: "c" }],
      unallocatedShards: [],
    });
    expect(s.homeOf("2")).toBe("A");
    expect(s.shardCount).toBe(3);
  });

  it("replays a batch written twice (after an ambiguous failure) to the same state", () => {
    const batch: CoordinatorEvent[] = [
      { type: "shard-home-allocated", shard: "4", region: "B" },
      { type: "shard-region-terminated", region: "B" },
      { type: "shard-home-deallocated", shard: "1" },
      { type: "shard-region-registered", region: "B", member: "b2" },
      { type: "shard-home-allocated", shard: "1", region: "B" },
      { type: "shard-region-proxy-terminated", proxy: "P" },
    ];
    const once = recoverCoordinatorState(undefined, [...base, ...batch], true);
    const twice = recoverCoordinatorState(undefined, [...base, ...batch, ...batch], true);
    expect(twice.toSnapshot()).toEqual(once.toSnapshot());
    expect(once.toSnapshot().unallocatedShards).toEqual(["3", "4"]);
  });

  it("reports no-ops and refuses contradictions", () => {
    const s = recoverCoordinatorState(undefined, base, false);
    expect(s.apply({ type: "shard-home-allocated", shard: "1", region: "A" })).toBe(false);
    expect(s.apply({ type: "shard-home-allocated", shard: "9", region: "Z" })).toBe(false);
    expect(s.apply({ type: "shard-home-deallocated", shard: "9" })).toBe(false);
    expect(s.apply({ type: "shard-region-terminated", region: "Z" })).toBe(false);
    expect(() => s.apply({ type: "shard-home-allocated", shard: "1", region: "B" })).toThrow(
      expect.objectContaining({ code: "COORDINATOR_STATE_CORRUPT" }),
    );
    expect(() => s.apply({ type: "shard-region-registered", region: "A", member: "x" })).toThrow(
      /second member/,
    );
    expect(() =>
      s.apply({ type: "shard-region-proxy-registered", proxy: "P", member: "x" }),
    ).toThrow(/second member/);
  });

  it("round-trips through a snapshot and rejects an inconsistent one", () => {
    const s = recoverCoordinatorState(undefined, base, true);
    s.apply({ type: "shard-home-deallocated", shard: "3" });
    const copy = CoordinatorState.fromSnapshot(s.toSnapshot(), true);
    expect(copy.toSnapshot()).toEqual(s.toSnapshot());
    expect([...copy.unallocated()]).toEqual(["3"]);
    expect(s.clone().toSnapshot()).toEqual(s.toSnapshot());
    const twice = {
      regions: [
        { region: "A", member: "a", shards: ["1"] },
        { region: "B", member: "b", shards: ["1"] },
      ],
      proxies: [],
      unallocatedShards: [],
    };
    expect(() => CoordinatorState.fromSnapshot(twice, false)).toThrow(/second region/);
    const dup = { ...twice, regions: [twice.regions[0], twice.regions[0]] } as typeof twice;
    expect(() => CoordinatorState.fromSnapshot(dup, false)).toThrow(/twice/);
  });

  it("without remember entities forgets deallocated shards", () => {
    const s = recoverCoordinatorState(undefined, base, false);
    s.apply({ type: "shard-region-terminated", region: "A" });
    expect([...s.unallocated()]).toEqual([]);
    expect(s.homeOf("1")).toBeUndefined();
  });
});

describe("sharding protocol guards", () => {
  it("accept well-formed messages and events", () => {
    expect(
      isCoordinatorCommand({ type: "register", region: "A", member: "a", hostedShards: ["1"] }),
    ).toBe(true);
    expect(
      isCoordinatorCommand({ type: "shard-stopped", shard: "1", handOffId: 3, from: "A" }),
    ).toBe(true);
    expect(
      isRegionCommand({ type: "shard-homes", homes: [{ region: "A", shards: ["1", "2"] }] }),
    ).toBe(true);
    expect(isRegionCommand({ type: "begin-hand-off", shard: "1", handOffId: 0 })).toBe(true);
    for (const e of base) expect(isCoordinatorEvent(e)).toBe(true);
  });

  it("reject malformed values without throwing", () => {
    const bad: unknown[] = [
      null,
      "register",
      [],
      { type: "register", region: "A", member: "a" },
      { type: "register", region: "A", member: "a", hostedShards: [1] },
      { type: "shard-stopped", shard: "1", handOffId: -1, from: "A" },
      { type: "shard-stopped", shard: "1", handOffId: 1.5, from: "A" },
      { type: "toString", shard: "1" },
      { type: "__proto__" },
      { type: "host-shard" },
    ];
    for (const v of bad) {
      expect(isCoordinatorCommand(v)).toBe(false);
      expect(isCoordinatorEvent(v)).toBe(false);
    }
    expect(isRegionCommand({ type: "shard-homes", homes: [{ region: "A" }] })).toBe(false);
    expect(isRegionCommand({ type: "host-shard" })).toBe(false);
  });
});
