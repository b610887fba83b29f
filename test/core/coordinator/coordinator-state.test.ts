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

describe("CoordinatorState, each event's no-op and its effect", () => {
  it("registering a known proxy for the same member again is a no-op; terminating it removes it once", () => {
    const s = recoverCoordinatorState(undefined, base, false);
    expect(s.apply({ type: "shard-region-proxy-registered", proxy: "P", member: "c" })).toBe(false);
    expect(s.apply({ type: "shard-region-registered", region: "A", member: "a" })).toBe(false);
    expect(s.apply({ type: "shard-region-proxy-registered", proxy: "Q", member: "d" })).toBe(true);
    expect([...s.proxies()]).toEqual([
      ["P", "c"],
      ["Q", "d"],
    ]);
    expect(s.apply({ type: "shard-region-proxy-terminated", proxy: "P" })).toBe(true);
    expect(s.apply({ type: "shard-region-proxy-terminated", proxy: "P" })).toBe(false);
    expect([...s.proxies().keys()]).toEqual(["Q"]);
  });

  it("each applied event that changes the state answers true", () => {
    const s = new CoordinatorState(true);
    expect(s.apply({ type: "shard-region-registered", region: "A", member: "a" })).toBe(true);
    expect(s.apply({ type: "shard-home-allocated", shard: "1", region: "A" })).toBe(true);
    expect(s.apply({ type: "shard-home-allocated", shard: "2", region: "A" })).toBe(true);
    expect(s.apply({ type: "shard-home-deallocated", shard: "1" })).toBe(true);
    expect(s.region("A")).toEqual({ member: "a", shards: ["2"] });
    expect([...s.unallocated()]).toEqual(["1"]);
    expect(s.apply({ type: "shard-region-terminated", region: "A" })).toBe(true);
    expect(s.region("A")).toBeUndefined();
    expect([...s.regions().keys()]).toEqual([]);
    expect([...s.unallocated()]).toEqual(["1", "2"]);
    expect(s.shardCount).toBe(0);
  });

  it("allocating an unallocated (remembered) shard takes it off the unallocated set", () => {
    const s = recoverCoordinatorState(undefined, base, true);
    s.apply({ type: "shard-home-deallocated", shard: "1" });
    expect([...s.unallocated()]).toEqual(["1"]);
    s.apply({ type: "shard-home-allocated", shard: "1", region: "B" });
    expect([...s.unallocated()]).toEqual([]);
    expect(s.region("B")?.shards).toEqual(["3", "1"]);
  });

  it("without remember entities a deallocated shard is not kept for allocation", () => {
    const s = recoverCoordinatorState(undefined, base, false);
    expect(s.apply({ type: "shard-home-deallocated", shard: "1" })).toBe(true);
    expect([...s.unallocated()]).toEqual([]);
    expect(s.homeOf("1")).toBeUndefined();
    expect(s.region("A")?.shards).toEqual(["2"]);
  });

  it("names the conflicting values in the corruption errors", () => {
    const s = recoverCoordinatorState(undefined, base, false);
    expect(() => s.apply({ type: "shard-home-allocated", shard: "1", region: "B" })).toThrow(
      expect.objectContaining({
        message: "coordinator state is inconsistent: shard 1 allocated to a second region",
        fields: { shard: "1", region: "B", currentRegion: "A" },
      }),
    );
    expect(() => s.apply({ type: "shard-region-registered", region: "A", member: "x" })).toThrow(
      expect.objectContaining({
        message: "coordinator state is inconsistent: region A registered for a second member",
        fields: { region: "A", member: "x", previousMember: "a" },
      }),
    );
    expect(() =>
      s.apply({ type: "shard-region-proxy-registered", proxy: "P", member: "x" }),
    ).toThrow(
      expect.objectContaining({
        message: "coordinator state is inconsistent: proxy P registered for a second member",
        fields: { proxy: "P", member: "x", previousMember: "c" },
      }),
    );
    const dup = {
      regions: [
        { region: "A", member: "a", shards: [] },
        { region: "A", member: "a", shards: [] },
      ],
      proxies: [],
      unallocatedShards: [],
    };
    expect(() => CoordinatorState.fromSnapshot(dup, false)).toThrow(
      expect.objectContaining({
        message: "coordinator state is inconsistent: region A appears twice in the snapshot",
        fields: { region: "A" },
      }),
    );
  });

  it("a snapshot's unallocated shards are kept only with remember entities and only when not allocated", () => {
    const snapshot = {
      regions: [{ region: "A", member: "a", shards: ["1"] }],
      proxies: [{ proxy: "P", member: "c" }],
      unallocatedShards: ["1", "2"],
    };
    const remembering = CoordinatorState.fromSnapshot(snapshot, true);
    expect([...remembering.unallocated()]).toEqual(["2"]);
    expect(remembering.homeOf("1")).toBe("A");
    expect(remembering.rememberEntities).toBe(true);
    expect(remembering.clone().rememberEntities).toBe(true);
    const forgetting = CoordinatorState.fromSnapshot(snapshot, false);
    expect([...forgetting.unallocated()]).toEqual([]);
    expect([...forgetting.proxies()]).toEqual([["P", "c"]]);
    expect(forgetting.clone().rememberEntities).toBe(false);
  });

  it("recovers events on top of a snapshot", () => {
    const snapshot = recoverCoordinatorState(undefined, base, true).toSnapshot();
    const s = recoverCoordinatorState(
      snapshot,
      [{ type: "shard-home-deallocated", shard: "3" }],
      true,
    );
    expect(s.region("B")?.shards).toEqual([]);
    expect([...s.unallocated()]).toEqual(["3"]);
    expect(s.homeOf("1")).toBe("A");
    const without = recoverCoordinatorState(snapshot, [], false);
    expect(without.rememberEntities).toBe(false);
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
