/**
 * Unit tests of the coordinator machine's edges that the scripts do not show well:
 * late replies to aborted hand-offs, bounds, strategy failures, snapshots, recovery from
 * a snapshot plus events, and the settings it validates.
 */
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/base/errors.js";
import type {
  CoordinatorInput,
  CoordinatorMember,
  CoordinatorOutput,
} from "../../../src/core/coordinator/coordinator-io.js";
import {
  CoordinatorTimer,
  parseCoordinatorTimer,
} from "../../../src/core/coordinator/coordinator-io.js";
import {
  type CoordinatorConfig,
  CoordinatorMachine,
} from "../../../src/core/coordinator/coordinator-machine.js";
import { resolveCoordinatorSettings } from "../../../src/core/coordinator/coordinator-settings.js";
import {
  type CoordinatorAllocationStrategy,
  consistentHashingStrategy,
  leastShardStrategy,
  thresholdStrategy,
} from "../../../src/core/coordinator/coordinator-strategy.js";
import type { RegionCommand } from "../../../src/protocol/sharding.js";

function member(name: string, status: CoordinatorMember["status"] = "up"): CoordinatorMember {
  return {
    uniqueAddress: name,
    address: name,
    status,
    appVersion: "1.0.0",
    reachable: true,
    roles: [],
  };
}

/** A machine with a driver that completes every write at once unless told otherwise. */
class Driver {
  readonly machine: CoordinatorMachine;
  now = 0;
  autoPersist = true;
  writing: number | undefined;
  readonly log: CoordinatorOutput[] = [];

  constructor(config: Partial<CoordinatorConfig> = {}) {
    this.machine = new CoordinatorMachine({
      self: "coord",
      strategy: leastShardStrategy(),
      recovery: { mode: "persistent" },
      ...config,
    });
  }

  feed(input: CoordinatorInput): CoordinatorOutput[] {
    const out = this.machine.handle(input, this.now);
    this.log.push(...out);
    const all = [...out];
    for (const o of out) if (o.type === "persist") this.writing = o.batchId;
    while (this.autoPersist && this.writing !== undefined) {
      const id = this.writing;
      this.writing = undefined;
      const more = this.machine.handle({ type: "persisted", batchId: id }, this.now);
      this.log.push(...more);
      all.push(...more);
      for (const o of more) if (o.type === "persist") this.writing = o.batchId;
    }
    return all;
  }

  sends(out: CoordinatorOutput[], type?: RegionCommand["type"]): [string, RegionCommand][] {
    return out.flatMap((o) =>
      o.type === "send" && (type === undefined || o.message.type === type)
        ? [[o.to, o.message] as [string, RegionCommand]]
        : [],
    );
  }

  /** Members a, b, ... up; regions A, B, ... registered. */
  setup(names: string[]): void {
    this.feed({ type: "membership", members: names.map((n) => member(n)) });
    for (const n of names)
      this.feed({ type: "register", region: n.toUpperCase(), member: n, hostedShards: [] });
  }
}

function handOffIdOf(sent: [string, RegionCommand][]): number {
  const m = sent[0]?.[1];
  if (m?.type !== "begin-hand-off") throw new Error("no BeginHandOff sent");
  return m.handOffId;
}

function homeOf(sent: [string, RegionCommand][]): string {
  const m = sent[0]?.[1];
  if (m?.type !== "shard-home") throw new Error("no ShardHome sent");
  return m.region;
}

function pinned(
  homes: Record<string, string>,
  rebalance: string[][] = [],
): CoordinatorAllocationStrategy {
  return {
    allocateShard: (_r, shard, regions) => homes[shard] ?? regions[0]?.regionId,
    rebalance: () => rebalance.shift() ?? [],
  };
}

describe("CoordinatorMachine leased shards moved away", () => {
  // S20L seed 5041: the one HandOff telling a region to stop a shard placed elsewhere was
  // lost on a reset connection; the region ran the shard and renewed its lease for ever.
  it("sends the HandOff of a shard moved away again every rebalance tick until ShardStopped", () => {
    const d = new Driver({
      strategy: pinned({ s: "A" }),
      settings: { shardsLeased: true, unreachableMoveAfterMs: 0 },
    });
    d.setup(["a", "b"]);
    d.feed({ type: "get-shard-home", shard: "s", from: "A" });
    const handOff = ["B", { type: "hand-off", shard: "s", handOffId: 0 }];
    // B reports s, which the coordinator places at A: told to stop it (and the message lost)
    const report = d.feed({ type: "register", region: "B", member: "b", hostedShards: ["s"] });
    expect(d.sends(report, "hand-off")).toEqual([handOff]);
    expect(d.sends(d.feed({ type: "rebalance-tick" }), "hand-off")).toEqual([handOff]);
    expect(d.sends(d.feed({ type: "rebalance-tick" }), "hand-off")).toEqual([handOff]);
    // not while B's member is unreachable (it gets them when reachable again)
    d.feed({ type: "membership", members: [member("a"), { ...member("b"), reachable: false }] });
    expect(d.sends(d.feed({ type: "rebalance-tick" }), "hand-off")).toEqual([]);
    const back = d.feed({ type: "membership", members: [member("a"), member("b")] });
    expect(d.sends(back, "hand-off")).toEqual([handOff]);
    d.feed({ type: "shard-stopped", shard: "s", handOffId: 0, from: "B" });
    expect(d.sends(d.feed({ type: "rebalance-tick" }), "hand-off")).toEqual([]);
  });

  it("a shard moved away and given back to the same region is not handed off again", () => {
    const d = new Driver({
      strategy: pinned({}),
      settings: { shardsLeased: true, unreachableMoveAfterMs: 0 },
    });
    d.setup(["a", "b"]);
    d.feed({ type: "get-shard-home", shard: "s", from: "A" });
    expect(d.machine.view().regions.find((r) => r.region === "A")?.shards).toEqual(["s"]);
    // A unreachable: s moves away from A (to B) ...
    d.feed({ type: "membership", members: [{ ...member("a"), reachable: false }, member("b")] });
    d.feed({ type: "get-shard-home", shard: "s", from: "B" });
    expect(d.machine.view().regions.find((r) => r.region === "B")?.shards).toEqual(["s"]);
    // ... then B goes, and s comes back to A before A answered the HandOff
    d.feed({ type: "membership", members: [member("a"), { ...member("b"), reachable: false }] });
    d.feed({ type: "get-shard-home", shard: "s", from: "A" });
    expect(d.machine.view().regions.find((r) => r.region === "A")?.shards).toEqual(["s"]);
    expect(d.sends(d.feed({ type: "rebalance-tick" }), "hand-off")).toEqual([]);
  });
});

describe("CoordinatorMachine hand-off", () => {
  it("a late ShardStopped of an aborted attempt never frees the shard during a later one", () => {
    const d = new Driver({ strategy: pinned({ s: "A" }, [["s"], ["s"]]) });
    d.setup(["a", "b"]);
    d.feed({ type: "get-shard-home", shard: "s", from: "A" });
    // Attempt 1: everyone acks, the owner gets HandOff and answers, but too late.
    const begin1 = d.sends(d.feed({ type: "rebalance-tick" }), "begin-hand-off");
    const id1 = handOffIdOf(begin1);
    d.feed({ type: "begin-hand-off-ack", shard: "s", handOffId: id1, from: "A" });
    const handOff = d.feed({ type: "begin-hand-off-ack", shard: "s", handOffId: id1, from: "B" });
    expect(d.sends(handOff, "hand-off")).toEqual([
      ["A", { type: "hand-off", shard: "s", handOffId: id1 }],
    ]);
    d.feed({ type: "get-shard-home", shard: "s", from: "A" });
    const timeout = d.feed({ type: "timer", key: "hand-off:s" });
    // Aborted: A (who asked meanwhile) is told it is still the home and restarts the shard.
    expect(d.sends(timeout, "shard-home")).toEqual([
      ["A", { type: "shard-home", shard: "s", region: "A" }],
    ]);
    // Attempt 2 begins; the stale ShardStopped of attempt 1 arrives now.
    const begin2 = d.sends(d.feed({ type: "rebalance-tick" }), "begin-hand-off");
    const id2 = handOffIdOf(begin2);
    expect(id2).not.toBe(id1);
    const stale = d.feed({ type: "shard-stopped", shard: "s", handOffId: id1, from: "A" });
    expect(stale.filter((o) => o.type === "persist")).toEqual([]);
    expect(d.machine.durableHomeOf("s")).toBe("A");
    expect(d.machine.view().handOffs.map((h) => [h.shard, h.id, h.phase])).toEqual([
      ["s", id2, "begin"],
    ]);
  });

  it("BeginHandOff goes to proxies too, and a terminated proxy counts as having acked", () => {
    const d = new Driver({ strategy: pinned({ s: "A" }, [["s"]]) });
    d.setup(["a", "b"]);
    d.feed({ type: "register-proxy", proxy: "P", member: "b" });
    d.feed({ type: "get-shard-home", shard: "s", from: "A" });
    const begin = d.sends(d.feed({ type: "rebalance-tick" }), "begin-hand-off");
    expect(begin.map(([to]) => to)).toEqual(["A", "B", "P"]);
    const id = handOffIdOf(begin);
    d.feed({ type: "begin-hand-off-ack", shard: "s", handOffId: id, from: "A" });
    d.feed({ type: "begin-hand-off-ack", shard: "s", handOffId: id, from: "B" });
    const out = d.feed({ type: "proxy-terminated", proxy: "P" });
    expect(d.sends(out, "hand-off")).toEqual([
      ["A", { type: "hand-off", shard: "s", handOffId: id }],
    ]);
    expect(
      out.some(
        (o) => o.type === "persist" && o.events[0]?.type === "shard-region-proxy-terminated",
      ),
    ).toBe(true);
  });
});

describe("CoordinatorMachine bounds and failures", () => {
  it("refuses requests for more than waitingShardsMax shards (counted and logged)", () => {
    const d = new Driver({ settings: { waitingShardsMax: 2, minNrOfMembers: 2 } });
    d.setup(["a"]);
    d.feed({ type: "get-shard-home", shard: "1", from: "A" });
    d.feed({ type: "get-shard-home", shard: "2", from: "A" });
    d.feed({ type: "get-shard-home", shard: "2", from: "A" });
    const out = d.feed({ type: "get-shard-home", shard: "3", from: "A" });
    expect(out).toContainEqual(
      expect.objectContaining({ type: "log", event: "get-shard-home-dropped" }),
    );
    expect(d.machine.view().waitingShards).toEqual(["1", "2"]);
    expect(d.machine.view().stats.droppedRequests).toBe(1);
  });

  it("a strategy that throws is logged; the request waits and nothing is decided", () => {
    let fail = true;
    const strategy: CoordinatorAllocationStrategy = {
      allocateShard: (_r, _s, regions) => {
        if (fail) throw new Error("boom");
        return regions[0]?.regionId;
      },
      rebalance: () => {
        throw new Error("boom");
      },
    };
    const d = new Driver({ strategy });
    d.setup(["a"]);
    const out = d.feed({ type: "get-shard-home", shard: "1", from: "A" });
    expect(out).toContainEqual(
      expect.objectContaining({ type: "log", level: "error", event: "strategy-failed" }),
    );
    expect(out.filter((o) => o.type === "persist")).toEqual([]);
    fail = false;
    const tick = d.feed({ type: "rebalance-tick" });
    expect(d.sends(tick, "shard-home")).toEqual([
      ["A", { type: "shard-home", shard: "1", region: "A" }],
    ]);
    expect(tick).toContainEqual(expect.objectContaining({ event: "strategy-failed" }));
  });

  it("ignores acknowledgements of writes it is not waiting for", () => {
    const d = new Driver();
    d.autoPersist = false;
    d.setup(["a"]);
    expect(d.feed({ type: "persisted", batchId: 7 })).toContainEqual(
      expect.objectContaining({ event: "persisted-unexpected" }),
    );
    expect(d.feed({ type: "persist-failed", batchId: 7, reason: "x" })).toContainEqual(
      expect.objectContaining({ event: "persist-failed-unexpected" }),
    );
    expect(d.feed({ type: "timer", key: "nonsense" })).toContainEqual(
      expect.objectContaining({ level: "debug", event: "timer-unknown" }),
    );
  });

  it("backs off exponentially up to persistRetryBackoffMaxMs and keeps batch ids", () => {
    const d = new Driver({
      settings: { persistRetryBackoffMs: 100, persistRetryBackoffMaxMs: 300 },
    });
    d.autoPersist = false;
    d.feed({ type: "membership", members: [member("a")] });
    const first = d.feed({ type: "register", region: "A", member: "a", hostedShards: [] });
    const batch = first.find((o) => o.type === "persist");
    const delays: number[] = [];
    for (let i = 0; i < 4; i++) {
      const out = d.feed({ type: "persist-failed", batchId: 1, reason: "down" });
      for (const o of out) if (o.type === "start-timer") delays.push(o.delayMs);
      expect(d.feed({ type: "timer", key: "persist-retry" })).toContainEqual(batch);
    }
    expect(delays).toEqual([100, 200, 300, 300]);
    expect(d.machine.view().stats.persistFailures).toBe(4);
  });

  it("writes at most persistBatchMax events per batch", () => {
    const d = new Driver({ settings: { persistBatchMax: 2 } });
    d.autoPersist = false;
    d.feed({ type: "membership", members: ["a", "b", "c", "d"].map((n) => member(n)) });
    const persists: number[] = [];
    for (const n of ["a", "b", "c", "d"])
      for (const o of d.feed({ type: "register", region: n, member: n, hostedShards: [] }))
        if (o.type === "persist") persists.push(o.events.length);
    for (let id = 1; id <= 2; id++)
      for (const o of d.feed({ type: "persisted", batchId: id }))
        if (o.type === "persist") persists.push(o.events.length);
    expect(persists).toEqual([1, 2, 1]);
  });
});

describe("CoordinatorMachine logs", () => {
  const logOf = (out: CoordinatorOutput[], event: string) =>
    out.find((o) => o.type === "log" && o.event === event);

  it("lists at most 20 shards in a log line, and counts them all", () => {
    const shards = Array.from({ length: 25 }, (_, i) => `s${i}`);
    const d = new Driver({
      strategy: pinned({}),
      settings: { shardsLeased: true, unreachableMoveAfterMs: 0 },
    });
    d.setup(["a", "b"]);
    const mismatch = logOf(
      d.feed({ type: "register", region: "B", member: "b", hostedShards: shards }),
      "hosted-shards-mismatch",
    );
    expect(mismatch).toMatchObject({
      message: "region B reports 25 shard(s) the coordinator places elsewhere; told to stop them",
      fields: { region: "B", shards: shards.slice(0, 20) },
    });
    for (const s of shards) d.feed({ type: "get-shard-home", shard: s, from: "B" });
    expect(d.machine.view().regions[0]?.shards).toHaveLength(25);
    const moved = logOf(
      d.feed({ type: "membership", members: [{ ...member("a"), reachable: false }, member("b")] }),
      "shards-moved-from-unreachable",
    );
    expect(moved).toMatchObject({
      fields: { region: "A", member: "a", shards: shards.slice(0, 20), count: 25 },
    });
    expect(d.machine.view().stats.shardsMovedFromUnreachable).toBe(25);
  });
});

describe("CoordinatorMachine persistence", () => {
  it("asks for a snapshot every snapshotAfterEvents events and recovers from it plus events", () => {
    const d = new Driver({ settings: { snapshotAfterEvents: 3 } });
    d.setup(["a", "b"]);
    const out = [
      ...d.feed({ type: "get-shard-home", shard: "1", from: "A" }),
      ...d.feed({ type: "get-shard-home", shard: "2", from: "A" }),
    ];
    const snapshot = out.find((o) => o.type === "save-snapshot");
    expect(snapshot).toBeDefined();
    if (snapshot?.type !== "save-snapshot") return;
    const later = d.log
      .filter((o) => o.type === "persist")
      .flatMap((o) => o.events)
      .slice(3);
    const recovered = new CoordinatorMachine({
      self: "coord",
      strategy: leastShardStrategy(),
      recovery: { mode: "persistent", snapshot: snapshot.snapshot, events: later },
    });
    expect(recovered.durableSnapshot()).toEqual(d.machine.durableSnapshot());
    expect(recovered.durableSnapshot().regions.map((r) => [r.region, r.shards])).toEqual([
      ["A", ["1"]],
      ["B", ["2"]],
    ]);
  });

  it("after its actor restarted, counts the regions registered before as registered (they never register again)", () => {
    const d = new Driver({ settings: { minNrOfMembers: 2 } });
    d.setup(["a", "b", "c"]);
    d.feed({ type: "get-shard-home", shard: "1", from: "A" });
    expect(d.machine.registeredRegions).toEqual(["A", "B", "C"]);
    const events = d.log.filter((o) => o.type === "persist").flatMap((o) => o.events);
    const restart = (registered?: string[]) => {
      const r = new Driver({
        settings: { minNrOfMembers: 2 },
        recovery: { mode: "persistent", events },
        ...(registered === undefined ? {} : { registered }),
      });
      r.feed({ type: "membership", members: ["a", "b", "c"].map((n) => member(n)) });
      return r;
    };
    // Without them it waits for registrations that will not come.
    const waiting = restart();
    expect(d.sends(waiting.feed({ type: "get-shard-home", shard: "2", from: "A" }))).toEqual([]);
    // With them (one not in the loaded state any more: not counted) it allocates at once.
    const again = restart(["A", "B", "Z"]);
    expect(again.machine.registeredRegions).toEqual(["A", "B"]);
    const home = d.sends(
      again.feed({ type: "get-shard-home", shard: "2", from: "A" }),
      "shard-home",
    );
    expect(home.map(([to]) => to)).toEqual(["A"]);
    // One region counted is not enough for minNrOfMembers 2.
    const one = restart(["A"]);
    expect(d.sends(one.feed({ type: "get-shard-home", shard: "3", from: "A" }))).toEqual([]);
  });

  it("names the batch being written until it is acknowledged, not one backing off", () => {
    const d = new Driver();
    d.autoPersist = false;
    d.setup(["a"]);
    /** The batch the last `persist` output named (read anew: feeding changes it). */
    const writing = (): number | undefined => d.writing;
    const first = d.writing as number;
    expect(d.machine.batchInFlight).toBe(first);
    d.writing = undefined;
    d.feed({ type: "get-shard-home", shard: "1", from: "A" });
    expect(writing(), "nothing else is written meanwhile").toBeUndefined();
    d.feed({ type: "persist-failed", batchId: first, reason: "down" });
    expect(d.machine.batchInFlight, "backing off").toBeUndefined();
    d.now += 60_000;
    d.feed({ type: "timer", key: CoordinatorTimer.persistRetry });
    expect(d.machine.batchInFlight).toBe(first);
    d.writing = undefined;
    d.feed({ type: "persisted", batchId: first });
    const second = writing() as number;
    expect(second).toBeGreaterThan(first);
    expect(d.machine.batchInFlight).toBe(second);
    d.writing = undefined;
    d.feed({ type: "persisted", batchId: second });
    expect(d.machine.batchInFlight).toBeUndefined();
  });

  it("refuses a journal that places a shard in two regions", () => {
    expect(
      () =>
        new CoordinatorMachine({
          self: "coord",
          strategy: leastShardStrategy(),
          recovery: {
            mode: "persistent",
            events: [
              { type: "shard-region-registered", region: "A", member: "a" },
              { type: "shard-region-registered", region: "B", member: "b" },
              { type: "shard-home-allocated", shard: "1", region: "A" },
              { type: "shard-home-allocated", shard: "1", region: "B" },
            ],
          },
        }),
    ).toThrow(expect.objectContaining({ code: "COORDINATOR_STATE_CORRUPT" }));
  });
});

describe("coordinator settings and helpers", () => {
  it("has documented defaults", () => {
    expect(resolveCoordinatorSettings()).toMatchObject({
      rebalanceIntervalMs: 10_000,
      handOffTimeoutMs: 60_000,
      shardStartTimeoutMs: 10_000,
      minNrOfMembers: 1,
      rememberEntities: false,
    });
  });

  it("rejects bad values, unknown keys and an inverted backoff range, naming the key", () => {
    expect(() => resolveCoordinatorSettings({ handOffTimeoutMs: 0 })).toThrow(ConfigError);
    expect(() => resolveCoordinatorSettings({ minNrOfMembers: 1.5 })).toThrow(
      /coordinator\.minNrOfMembers/,
    );
    expect(() =>
      resolveCoordinatorSettings({ rebalanceIntervallMs: 5 } as unknown as Record<string, number>),
    ).toThrow(/coordinator\.rebalanceIntervallMs/);
    expect(() =>
      resolveCoordinatorSettings({ persistRetryBackoffMs: 10, persistRetryBackoffMaxMs: 5 }),
    ).toThrow(/persistRetryBackoffMaxMs/);
    expect(() => new Driver({ settings: { rebalanceConcurrencyMax: 0 } })).toThrow(ConfigError);
  });

  it("accepts a backoff range of one value; an inverted one names the key, its prefix and the lower bound", () => {
    expect(
      resolveCoordinatorSettings({ persistRetryBackoffMs: 10, persistRetryBackoffMaxMs: 10 }),
    ).toMatchObject({ persistRetryBackoffMs: 10, persistRetryBackoffMaxMs: 10 });
    expect(() =>
      resolveCoordinatorSettings({ persistRetryBackoffMs: 10, persistRetryBackoffMaxMs: 9 }),
    ).toThrow(
      expect.objectContaining({
        key: "coordinator.persistRetryBackoffMaxMs",
        value: 9,
        allowed: "a duration in milliseconds >= persistRetryBackoffMs (10)",
      }),
    );
    expect(() =>
      resolveCoordinatorSettings(
        { persistRetryBackoffMs: 10, persistRetryBackoffMaxMs: 9 },
        "sharding.coordinator.",
      ),
    ).toThrow(expect.objectContaining({ key: "sharding.coordinator.persistRetryBackoffMaxMs" }));
    expect(() => resolveCoordinatorSettings({ minNrOfMembers: 0 }, "x.")).toThrow(
      expect.objectContaining({ key: "x.minNrOfMembers" }),
    );
  });

  it("validates the built-in strategies' settings up front", () => {
    expect(() => leastShardStrategy({ relativeLimit: 2 })).toThrow(ConfigError);
    expect(() => thresholdStrategy({ rebalanceThreshold: 0 })).toThrow(ConfigError);
    expect(() => consistentHashingStrategy({ maxSimultaneousRebalance: 0 })).toThrow(ConfigError);
  });

  it("parses timer keys", () => {
    expect(parseCoordinatorTimer("host-shard:a:b")).toEqual({ kind: "host-shard", shard: "a:b" });
    expect(parseCoordinatorTimer("hand-off:7")).toEqual({ kind: "hand-off", shard: "7" });
    expect(parseCoordinatorTimer("persist-retry")).toEqual({ kind: "persist-retry" });
    expect(parseCoordinatorTimer("other:1")).toBeUndefined();
  });

  it("parses back every key it makes, and no key without the colon", () => {
    expect(parseCoordinatorTimer(CoordinatorTimer.hostShard("s:1"))).toEqual({
      kind: "host-shard",
      shard: "s:1",
    });
    expect(parseCoordinatorTimer(CoordinatorTimer.regionRemoval("R:2"))).toEqual({
      kind: "region-removal",
      region: "R:2",
    });
    expect(parseCoordinatorTimer(CoordinatorTimer.unreachableMove("a#2"))).toEqual({
      kind: "unreachable-move",
      member: "a#2",
    });
    expect(parseCoordinatorTimer(CoordinatorTimer.recoveryMargin)).toEqual({
      kind: "recovery-margin",
    });
    // the kind is the text before the first colon: none, or an empty one, is no timer
    for (const key of ["hand-offs", "host-shards", ":hand-off", "", "persist-retry:1"])
      expect(parseCoordinatorTimer(key), key).toBeUndefined();
  });

  it("the threshold strategy allocates each new shard to the region with the fewest shards", () => {
    const d = new Driver({ strategy: thresholdStrategy() });
    d.setup(["a", "b", "c"]);
    const homes = ["1", "2", "3", "4"].map((s) =>
      homeOf(d.sends(d.feed({ type: "get-shard-home", shard: s, from: "C" }), "shard-home")),
    );
    expect(homes).toEqual(["A", "B", "C", "A"]);
  });

  it("consistent hashing places shards on the same region whoever asks", () => {
    const d = new Driver({ strategy: consistentHashingStrategy() });
    d.setup(["a", "b", "c"]);
    const homes = ["1", "2", "3", "4", "5", "6"].map((s) => {
      const out = d.feed({ type: "get-shard-home", shard: s, from: "C" });
      return homeOf(d.sends(out, "shard-home"));
    });
    const again = new Driver({ strategy: consistentHashingStrategy() });
    again.setup(["c", "b", "a"]);
    const homes2 = ["1", "2", "3", "4", "5", "6"].map((s) => {
      const out = again.feed({ type: "get-shard-home", shard: s, from: "A" });
      return homeOf(again.sends(out, "shard-home"));
    });
    expect(homes2).toEqual(homes);
    expect(new Set(homes).size).toBeGreaterThan(1);
  });
});

describe("CoordinatorMachine queries", () => {
  it("reports the hand-offs in progress: count, attempt id per shard, and reason", () => {
    const d = new Driver({ strategy: pinned({ s: "A", t: "B" }, [["s"]]) });
    d.setup(["a", "b"]);
    d.feed({ type: "get-shard-home", shard: "s", from: "A" });
    d.feed({ type: "get-shard-home", shard: "t", from: "A" });
    expect(d.machine.handOffCount).toBe(0);
    expect(d.machine.handOffIdOf("s")).toBeUndefined();
    expect(d.machine.handOffsInProgress()).toEqual([]);
    const id = handOffIdOf(d.sends(d.feed({ type: "rebalance-tick" }), "begin-hand-off"));
    const shutdown = d.sends(
      d.feed({ type: "graceful-shutdown-req", region: "B" }),
      "begin-hand-off",
    );
    const id2 = handOffIdOf(shutdown);
    expect(id2).not.toBe(id);
    expect(d.machine.handOffCount).toBe(2);
    expect(d.machine.handOffIdOf("s")).toBe(id);
    expect(d.machine.handOffIdOf("t")).toBe(id2);
    expect(d.machine.handOffIdOf("u")).toBeUndefined();
    expect(d.machine.handOffsInProgress()).toEqual([
      { id, shard: "s", reason: "rebalance" },
      { id: id2, shard: "t", reason: "shutdown" },
    ]);
    // the view lists them without the acks still missing, and marks the shutting-down region
    const v = d.machine.view();
    expect(v.handOffs).toEqual([
      { id, shard: "s", owner: "A", reason: "rebalance", startedAtMs: 0, phase: "begin" },
      { id: id2, shard: "t", owner: "B", reason: "shutdown", startedAtMs: 0, phase: "begin" },
    ]);
    expect(v.regions).toEqual([
      { region: "A", member: "a", shards: ["s"], shuttingDown: false },
      { region: "B", member: "b", shards: ["t"], shuttingDown: true },
    ]);
    expect(d.machine.durableHomeOf("t")).toBe("B");
    expect(d.machine.durableHomeOf("u")).toBeUndefined();
  });

  it("the view's counters, flags and pending events are copies of the machine's", () => {
    const d = new Driver({ settings: { minNrOfMembers: 2, waitingShardsMax: 1 } });
    d.autoPersist = false;
    d.feed({ type: "membership", members: [member("a"), member("b")] });
    d.feed({ type: "register", region: "A", member: "a", hostedShards: [] });
    d.feed({ type: "register", region: "B", member: "b", hostedShards: [] });
    const before = d.machine.view();
    expect(before).toMatchObject({
      pendingEvents: 2,
      persistFailing: false,
      allocationOpen: true,
      recovering: false,
      proxies: [],
      waitingShards: [],
      unallocatedShards: [],
    });
    d.feed({ type: "persist-failed", batchId: 1, reason: "down" });
    d.feed({ type: "get-shard-home", shard: "1", from: "A" });
    d.feed({ type: "get-shard-home", shard: "2", from: "A" });
    const after = d.machine.view();
    expect(after).toMatchObject({ persistFailing: true, waitingShards: ["1"] });
    expect(after.stats).toEqual({
      droppedRequests: 1,
      persistFailures: 1,
      handOffTimeouts: 0,
      handOffsCompleted: 0,
      shardsMovedFromUnreachable: 0,
    });
    expect(before.stats.droppedRequests).toBe(0);
  });

  it("recovers from a snapshot alone (no events), and starts empty in regions mode", () => {
    const d = new Driver();
    d.setup(["a"]);
    d.feed({ type: "get-shard-home", shard: "1", from: "A" });
    const snapshot = d.machine.durableSnapshot();
    const recovered = new CoordinatorMachine({
      self: "coord",
      strategy: leastShardStrategy(),
      recovery: { mode: "persistent", snapshot },
    });
    expect(recovered.durableSnapshot()).toEqual(snapshot);
    expect(recovered.view().recovering).toBe(false);
    const regions = new CoordinatorMachine({
      self: "coord",
      strategy: leastShardStrategy(),
      recovery: { mode: "regions" },
    });
    expect(regions.view()).toMatchObject({ regions: [], recovering: true });
  });
});
