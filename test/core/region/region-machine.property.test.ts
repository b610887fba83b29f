/**
 * Property tests (fast-check, fixed seed: deterministic in CI; a failure prints the seed,
 * the shrunk action list and the end of the trace) of the region machine in the harness
 * world (region-harness.ts). Random interleavings of messages, coordinator changes,
 * well-formed coordinator messages from current and stale coordinators (registration
 * acks, homes here and elsewhere, HostShard, BeginHandOff, HandOff), local shards coming
 * up, delivering, handing back and stopping, region terminations, timers, graceful
 * shutdown, self-downing and stop never deliver a message twice, never reorder messages
 * of one (sender, entity) pair, and account for every message: delivered, in a local
 * shard, dead-lettered (and counted) or still buffered. Once the world settles (a
 * coordinator answers every waiting shard), nothing stays buffered.
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import type { RegionCommand } from "../../../src/protocol/sharding.js";
import { type RegionAction, RegionWorld } from "./region-harness.js";

const shard = fc.constantFrom("s0", "s1", "s2");
const coordinator = fc.constantFrom("C1", "C2");
const handOffId = fc.integer({ min: 1, max: 4 });

const command: fc.Arbitrary<RegionCommand> = fc.oneof(
  {
    weight: 2,
    arbitrary: coordinator.map((c) => ({ type: "register-ack" as const, coordinator: c })),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant("shard-home" as const),
      shard,
      region: fc.constantFrom("A", "A", "P", "B", "D"),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      type: fc.constant("shard-homes" as const),
      homes: fc.array(
        fc.record({
          region: fc.constantFrom("A", "B", "D"),
          shards: fc.uniqueArray(shard, { maxLength: 2 }),
        }),
        { maxLength: 2 },
      ),
    }),
  },
  { weight: 3, arbitrary: fc.record({ type: fc.constant("host-shard" as const), shard }) },
  {
    weight: 2,
    arbitrary: fc.record({ type: fc.constant("begin-hand-off" as const), shard, handOffId }),
  },
  { weight: 2, arbitrary: fc.record({ type: fc.constant("hand-off" as const), shard, handOffId }) },
);

const action: fc.Arbitrary<RegionAction> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant("deliver" as const),
      entity: fc.nat(4),
      // "r" is a sender on another member: its messages arrive forwarded by its region
      sender: fc.constantFrom("x", "y", "r"),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("coordinator" as const),
      coordinator: fc.option(coordinator, { nil: undefined }),
    }),
  },
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant("from" as const),
      stale: fc.nat(6).map((n) => n === 0),
      message: command,
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("shard-up" as const), shard }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("shard-process" as const),
      shard,
      n: fc.integer({ min: 1, max: 3 }),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("shard-finish" as const), shard }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("terminated" as const),
      region: fc.constantFrom("B", "D"),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("timer" as const), pick: fc.nat(3) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("advance" as const),
      ms: fc.integer({ min: 1, max: 3_000 }),
    }),
  },
);

/** Graceful shutdown, self-downing or stop: at most once per run, then more actions. */
const ending: fc.Arbitrary<RegionAction | undefined> = fc.option(
  fc.constantFrom(
    { kind: "graceful-shutdown" as const },
    { kind: "self-downed" as const },
    { kind: "stop" as const },
  ),
  { nil: undefined, freq: 2 },
);

const run = fc
  .record({
    proxy: fc.nat(3).map((n) => n === 0),
    /** 0: no coordinator known at first; 1: known; 2-4: known and registered. */
    start: fc.nat(4),
    before: fc.array(action, { maxLength: 80, size: "max" }),
    end: ending,
    after: fc.array(action, { maxLength: 30, size: "max" }),
  })
  .map(({ proxy, start, before, end, after }) => ({
    proxy,
    coordinator: start > 0 ? "C1" : undefined,
    registered: start > 1,
    actions: end === undefined ? [...before, ...after] : [...before, end, ...after],
  }));

beforeAll(() => {
  fc.configureGlobal({ seed: 0x5e610, numRuns: 400 });
});

describe("RegionMachine properties", () => {
  it("no message delivered twice or out of (sender, entity) order; every message accounted for", () => {
    fc.assert(
      fc.property(run, ({ proxy, coordinator, registered, actions }) => {
        const w = new RegionWorld(proxy, coordinator, registered);
        for (const a of actions) w.act(a);
        const c = w.counts();
        expect(c.region + c.shard + c.delivered + c.dead).toBe(w.messageCount);
      }),
    );
  });

  it("once a coordinator answers every waiting shard, nothing stays buffered", () => {
    fc.assert(
      fc.property(run, ({ proxy, coordinator, registered, actions }) => {
        const w = new RegionWorld(proxy, coordinator, registered);
        for (const a of actions) w.act(a);
        w.settle();
        expect(w.machine.stats.bufferedMessages).toBe(0);
      }),
    );
  });

  it("generates runs that exercise the interesting paths", () => {
    // Guards against a generator that never reaches hand-off leftovers, local delivery or
    // the driver fast paths (`route` to the local shard or to another region: checked
    // against handle on every delivery).
    let leftovers = 0;
    let localDelivered = 0;
    let direct = 0;
    let forwarded = 0;
    fc.assert(
      fc.property(run, ({ proxy, coordinator, registered, actions }) => {
        const w = new RegionWorld(proxy, coordinator, registered);
        for (const a of actions) w.act(a);
        if (w.trace.some((l) => l.includes('"return-to-region"'))) leftovers++;
        if (w.trace.some((l) => l.includes('"deliver-local"'))) localDelivered++;
        if (w.directDeliveries > 0) direct++;
        if (w.directForwards > 0) forwarded++;
      }),
    );
    expect(leftovers).toBeGreaterThanOrEqual(15);
    expect(localDelivered).toBeGreaterThanOrEqual(50);
    expect(direct, "runs with route = self deliveries").toBeGreaterThanOrEqual(20);
    expect(forwarded, "runs with route = another region deliveries").toBeGreaterThanOrEqual(20);
  });
});
