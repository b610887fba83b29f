/**
 * Property tests (fast-check, fixed seed: deterministic in CI; a failure prints the seed
 * and the shrunk counterexample) for the allocation strategies, each checked against a
 * naive reference written here, plus the shardkit-specific behaviour that the Pekko
 * vectors do not pin (string order of the threshold donor, the consistent region
 * comparator, consistent hashing).
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import {
  consistentHashingAllocate,
  consistentHashingRebalance,
  rendezvousWeight,
} from "../../../../src/core/coordinator/allocation/consistent-hashing.js";
import {
  leastShardAllocate,
  leastShardRebalance,
  resolveLeastShardSettings,
} from "../../../../src/core/coordinator/allocation/least-shard.js";
import {
  isGoodTimeToRebalance,
  regionsHaveSameAppVersion,
} from "../../../../src/core/coordinator/allocation/rebalance-gate.js";
import {
  isDepartingStatus,
  mostPreferredRegion,
  sortRegionsByPreference,
} from "../../../../src/core/coordinator/allocation/region-preference.js";
import {
  type RebalanceClusterFacts,
  type RegionView,
  rebalanceClusterFactsOf,
  SETTLED_CLUSTER,
} from "../../../../src/core/coordinator/allocation/region-view.js";
import { thresholdRebalance } from "../../../../src/core/coordinator/allocation/threshold-rebalance.js";
import {
  MEMBER_STATUSES,
  type MemberStatus,
} from "../../../../src/core/membership/member-status.js";

beforeAll(() => {
  fc.configureGlobal({ seed: 0x5eed, numRuns: 300 });
});

// ---- generators ----------------------------------------------------------------------

const VERSIONS = ["1.0.0", "1.0.1", "1.2.0", "2.0.0"] as const;

interface Shape {
  readonly status: MemberStatus;
  readonly appVersion: string;
  readonly size: number;
}

function build(shapes: readonly Shape[]): RegionView[] {
  return shapes.map((s, i) => ({
    regionId: `r${i}`,
    member: { address: `node-${i}:2552`, status: s.status, appVersion: s.appVersion },
    shards: Array.from({ length: s.size }, (_, k) => `r${i}-s${String(k).padStart(3, "0")}`),
  }));
}

const shapeArb = (
  statuses: readonly MemberStatus[],
  versions: readonly string[],
  maxSize: number,
) =>
  fc.record({
    status: fc.constantFrom(...statuses),
    appVersion: fc.constantFrom(...versions),
    size: fc.nat({ max: maxSize }),
  });

const anyRegions = fc
  .array(shapeArb(MEMBER_STATUSES, VERSIONS, 30), { minLength: 1, maxLength: 8 })
  .map(build);
const settledRegions = (maxRegions: number, maxSize: number) =>
  fc
    .array(shapeArb(["up"], ["1.0.0"], maxSize), { minLength: 1, maxLength: maxRegions })
    .map(build);
const limitsArb = fc.record({
  absoluteLimit: fc.integer({ min: 1, max: 50 }),
  relativeLimit: fc.double({ min: 0.01, max: 1, noNaN: true }),
});

// ---- naive references ----------------------------------------------------------------

const versionKey = (v: string) => v.split(".").map(Number);
function compareVersionsNaive(a: string, b: string): number {
  const [x, y] = [versionKey(a), versionKey(b)];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
  return 0;
}

/** Earliest region with the fewest shards among the non-departing, newest-version ones. */
function naiveAllocate(regions: readonly RegionView[]): string | undefined {
  const staying = regions.filter((r) => !isDepartingStatus(r.member.status));
  const pool = staying.length > 0 ? staying : [...regions];
  const newest = pool.reduce<string | undefined>(
    (v, r) =>
      v === undefined || compareVersionsNaive(r.member.appVersion, v) > 0 ? r.member.appVersion : v,
    undefined,
  );
  const top = pool.filter((r) => r.member.appVersion === newest);
  const fewest = Math.min(...top.map((r) => r.shards.length));
  return top.find((r) => r.shards.length === fewest)?.regionId;
}

/** Pekko test helper: remove moved shards, re-allocate them in string order. */
function applyMoves(regions: readonly RegionView[], moved: ReadonlySet<string>): RegionView[] {
  const current = regions.map((r) => ({ ...r, shards: r.shards.filter((s) => !moved.has(s)) }));
  for (const s of [...moved].sort()) {
    const target = leastShardAllocate(current);
    current.find((r) => r.regionId === target?.regionId)?.shards.push(s);
  }
  return current;
}

const allShards = (regions: readonly RegionView[]) => new Set(regions.flatMap((r) => r.shards));
const spread = (regions: readonly RegionView[]) => {
  const sizes = regions.map((r) => r.shards.length);
  return Math.max(...sizes) - Math.min(...sizes);
};
const limitOf = (n: number, s: { absoluteLimit: number; relativeLimit: number }) =>
  Math.max(1, Math.min(Math.trunc(s.relativeLimit * n), s.absoluteLimit));

const blockedFacts: readonly RebalanceClusterFacts[] = [
  { hasUnreachableMember: true, hasJoiningMember: false },
  { hasUnreachableMember: false, hasJoiningMember: true },
];

// ---- least-shard ---------------------------------------------------------------------

describe("leastShardAllocate", () => {
  it("matches the naive reference: fewest shards among non-departing newest-version regions", () => {
    fc.assert(
      fc.property(anyRegions, (regions) => {
        expect(leastShardAllocate(regions)?.regionId).toBe(naiveAllocate(regions));
      }),
    );
  });

  it("returns undefined when there is no region", () => {
    expect(leastShardAllocate([])).toBeUndefined();
  });

  it("sorting is a stable permutation consistent with allocate", () => {
    fc.assert(
      fc.property(anyRegions, (regions) => {
        const sorted = sortRegionsByPreference(regions);
        expect(sorted.map((r) => r.regionId).sort()).toEqual(regions.map((r) => r.regionId).sort());
        expect(sorted[0]?.regionId).toBe(leastShardAllocate(regions)?.regionId);
      }),
    );
  });

  it("intended difference: a weakly-up region on a newer version is preferred over a loaded up one", () => {
    const [up, weaklyUp] = build([
      { status: "up", appVersion: "1.0.0", size: 10 },
      { status: "weakly-up", appVersion: "1.0.1", size: 0 },
    ]) as [RegionView, RegionView];
    // Pekko compares Up vs WeaklyUp as EQUAL (tier 1 stops) and would pick the first, `up`.
    expect(leastShardAllocate([up, weaklyUp])?.regionId).toBe(weaklyUp.regionId);
  });
});

describe("leastShardRebalance", () => {
  it("returns a subset of hosted shards, within the limit", () => {
    fc.assert(
      fc.property(settledRegions(8, 40), limitsArb, (regions, limits) => {
        const result = leastShardRebalance(regions, new Set(), limits, SETTLED_CLUSTER);
        const hosted = allShards(regions);
        for (const s of result) expect(hosted.has(s)).toBe(true);
        expect(result.size).toBeLessThanOrEqual(limitOf(hosted.size, limits));
      }),
    );
  });

  it("moves nothing while a rebalance is in progress", () => {
    fc.assert(
      fc.property(
        settledRegions(8, 40),
        limitsArb,
        fc.string({ minLength: 1 }),
        (regions, limits, s) => {
          expect(leastShardRebalance(regions, new Set([s]), limits, SETTLED_CLUSTER).size).toBe(0);
        },
      ),
    );
  });

  it("moves nothing when blocked (unreachable, joining, mixed versions)", () => {
    fc.assert(
      fc.property(anyRegions, limitsArb, (regions, limits) => {
        for (const facts of blockedFacts)
          expect(leastShardRebalance(regions, new Set(), limits, facts).size).toBe(0);
        const versions = new Set(regions.map((r) => r.member.appVersion));
        if (versions.size > 1)
          expect(leastShardRebalance(regions, new Set(), limits, SETTLED_CLUSTER).size).toBe(0);
      }),
    );
  });

  it("repeated rounds converge to max - min <= 1 without losing shards", () => {
    fc.assert(
      fc.property(settledRegions(12, 60), limitsArb, (initial, limits) => {
        let regions = initial;
        const total = allShards(regions).size;
        for (let round = 0; round < 200 && spread(regions) > 1; round++) {
          const moved = leastShardRebalance(regions, new Set(), limits, SETTLED_CLUSTER);
          expect(moved.size, `round ${round} made no progress`).toBeGreaterThan(0);
          regions = applyMoves(regions, moved);
          expect(allShards(regions).size).toBe(total);
        }
        expect(spread(regions)).toBeLessThanOrEqual(1);
      }),
      { numRuns: 150 },
    );
  });
});

// ---- deprecated threshold ------------------------------------------------------------

describe("thresholdRebalance", () => {
  const thresholdArb = fc.record({
    rebalanceThreshold: fc.integer({ min: 1, max: 5 }),
    maxSimultaneousRebalance: fc.integer({ min: 1, max: 8 }),
  });

  it("never returns in-progress shards, stays within its limits and takes from one donor", () => {
    fc.assert(
      fc.property(settledRegions(6, 30), thresholdArb, fc.nat({ max: 6 }), (regions, s, k) => {
        const inProgress = new Set([...allShards(regions)].slice(0, k));
        const result = thresholdRebalance(regions, inProgress, s, SETTLED_CLUSTER);
        for (const x of result) expect(inProgress.has(x)).toBe(false);
        expect(result.size).toBeLessThanOrEqual(
          Math.max(0, Math.min(s.rebalanceThreshold, s.maxSimultaneousRebalance - inProgress.size)),
        );
        const donors = new Set(
          regions.filter((r) => r.shards.some((x) => result.has(x))).map((r) => r.regionId),
        );
        expect(donors.size).toBeLessThanOrEqual(1);
      }),
    );
  });

  it("moves nothing when blocked", () => {
    fc.assert(
      fc.property(settledRegions(6, 30), thresholdArb, (regions, s) => {
        for (const facts of blockedFacts)
          expect(thresholdRebalance(regions, new Set(), s, facts).size).toBe(0);
      }),
    );
  });

  it("takes the donor's shards in string order, not allocation order", () => {
    const [donor, empty] = build([
      { status: "up", appVersion: "1.0.0", size: 0 },
      { status: "up", appVersion: "1.0.0", size: 0 },
    ]) as [RegionView, RegionView];
    const regions = [{ ...donor, shards: ["d", "b", "e", "a", "c"] }, empty];
    const result = thresholdRebalance(
      regions,
      new Set(),
      { rebalanceThreshold: 2, maxSimultaneousRebalance: 10 },
      SETTLED_CLUSTER,
    );
    expect([...result]).toEqual(["a", "b"]);
  });
});

// ---- consistent hashing --------------------------------------------------------------

describe("consistent hashing", () => {
  const upRegions = (n: number) =>
    build(Array.from({ length: n }, () => ({ status: "up", appVersion: "1.0.0", size: 0 })));
  const shardIds = Array.from({ length: 2000 }, (_, i) => `shard-${i}`);

  it("does not depend on region order", () => {
    fc.assert(
      fc.property(
        fc.shuffledSubarray(upRegions(7), { minLength: 1 }),
        fc.string(),
        (regions, shard) => {
          const reversed = [...regions].reverse();
          expect(consistentHashingAllocate(reversed, shard)?.regionId).toBe(
            consistentHashingAllocate(regions, shard)?.regionId,
          );
        },
      ),
    );
  });

  it("adding a region moves shards only to it, about 1/N of them", () => {
    const before = upRegions(5);
    const after = upRegions(6);
    let moved = 0;
    for (const s of shardIds) {
      const a = consistentHashingAllocate(before, s)?.regionId;
      const b = consistentHashingAllocate(after, s)?.regionId;
      if (a !== b) {
        expect(b).toBe("r5");
        moved++;
      }
    }
    expect(moved / shardIds.length).toBeGreaterThan(0.1);
    expect(moved / shardIds.length).toBeLessThan(0.25);
  });

  it("removing a region moves only its own shards, and spreads load", () => {
    const all = upRegions(5);
    const without = all.filter((r) => r.regionId !== "r2");
    const counts = new Map<string, number>();
    for (const s of shardIds) {
      const a = consistentHashingAllocate(all, s)?.regionId as string;
      counts.set(a, (counts.get(a) ?? 0) + 1);
      if (a !== "r2") expect(consistentHashingAllocate(without, s)?.regionId).toBe(a);
    }
    for (const c of counts.values()) expect(c / shardIds.length).toBeGreaterThan(0.12);
  });

  it("avoids departing and older-version regions when others exist", () => {
    const regions = build([
      { status: "leaving", appVersion: "2.0.0", size: 0 },
      { status: "up", appVersion: "1.0.0", size: 0 },
      { status: "up", appVersion: "1.0.1", size: 0 },
    ]);
    for (const s of shardIds.slice(0, 100))
      expect(consistentHashingAllocate(regions, s)?.regionId).toBe("r2");
    // the best class first, then worse ones: still only the best
    const bestFirst = build([
      { status: "up", appVersion: "1.0.1", size: 0 },
      { status: "up", appVersion: "1.0.0", size: 0 },
      { status: "leaving", appVersion: "1.0.1", size: 0 },
    ]);
    for (const s of shardIds.slice(0, 100))
      expect(consistentHashingAllocate(bestFirst, s)?.regionId).toBe("r0");
  });

  it("the region with the highest rendezvous weight wins", () => {
    const regions = upRegions(5);
    for (const s of shardIds.slice(0, 200)) {
      const weights = regions.map((r) => rendezvousWeight(s, r.member.address));
      const best = regions[weights.indexOf(Math.max(...weights))]?.regionId;
      expect(consistentHashingAllocate(regions, s)?.regionId).toBe(best);
    }
  });

  it("rebalance moves nothing while more shards than maxSimultaneousRebalance are in flight", () => {
    const regions = upRegions(3);
    // every shard on r0: most are misplaced
    const onFirst = regions.map((r, i) => ({ ...r, shards: i === 0 ? shardIds.slice(0, 30) : [] }));
    const inFlight = new Set(["x", "y", "z"]);
    for (const max of [1, 2, 3])
      expect(
        consistentHashingRebalance(
          onFirst,
          inFlight,
          { maxSimultaneousRebalance: max },
          SETTLED_CLUSTER,
        ).size,
      ).toBe(0);
    expect(
      consistentHashingRebalance(
        onFirst,
        inFlight,
        { maxSimultaneousRebalance: 4 },
        SETTLED_CLUSTER,
      ).size,
    ).toBe(1);
  });

  it("breaks weight ties by the smaller address, then the smaller region id, in any order", () => {
    const on = (regionId: string, address: string): RegionView => ({
      regionId,
      member: { address, status: "up", appVersion: "1.0.0" },
      shards: [],
    });
    // found by search: these two addresses give shard "s" the same weight
    const [x, y] = ["node-32151:2552", "node-81040:2552"];
    expect(rendezvousWeight("s", x)).toBe(rendezvousWeight("s", y));
    for (const regions of [
      [on("r1", y), on("r2", x)],
      [on("r2", x), on("r1", y)],
    ])
      expect(consistentHashingAllocate(regions, "s")?.regionId).toBe("r2");
    // two regions on one member always tie: the smaller region id
    for (const regions of [
      [on("b", x), on("a", x)],
      [on("a", x), on("b", x)],
    ])
      expect(consistentHashingAllocate(regions, "s")?.regionId).toBe("a");
  });

  it("rebalance takes the misplaced shards in shard-id string order, up to the budget", () => {
    const regions = upRegions(3);
    const ids = shardIds.slice(0, 60);
    // every shard sits on the region after its preferred one: all of them are misplaced
    const next = (s: string) => {
      const i = regions.findIndex(
        (r) => r.regionId === consistentHashingAllocate(regions, s)?.regionId,
      );
      return regions[(i + 1) % regions.length]?.regionId;
    };
    const placed = regions.map((r) => ({
      ...r,
      shards: ids.filter((s) => next(s) === r.regionId),
    }));
    const misplaced = [...ids].sort();
    const moved = consistentHashingRebalance(
      placed,
      new Set([misplaced[0] as string]),
      { maxSimultaneousRebalance: 5 },
      SETTLED_CLUSTER,
    );
    expect([...moved]).toEqual(misplaced.slice(1, 5));
  });

  it("rebalance is bounded, skips in-progress shards and converges to the preferred placement", () => {
    fc.assert(
      fc.property(settledRegions(6, 25), fc.integer({ min: 1, max: 10 }), (initial, max) => {
        const settings = { maxSimultaneousRebalance: max };
        let regions = initial.map((r) => ({ ...r, shards: [...r.shards] }));
        const inProgress = new Set(regions[0]?.shards.slice(0, 1));
        const first = consistentHashingRebalance(regions, inProgress, settings, SETTLED_CLUSTER);
        expect(first.size).toBeLessThanOrEqual(Math.max(0, max - inProgress.size));
        for (const s of first) expect(inProgress.has(s)).toBe(false);
        for (const facts of blockedFacts)
          expect(consistentHashingRebalance(regions, new Set(), settings, facts).size).toBe(0);
        for (let round = 0; round < 200; round++) {
          const moved = consistentHashingRebalance(regions, new Set(), settings, SETTLED_CLUSTER);
          if (moved.size === 0) break;
          const homes = [...moved].map(
            (s) => [s, consistentHashingAllocate(regions, s)?.regionId] as const,
          );
          regions = regions.map((r) => ({ ...r, shards: r.shards.filter((s) => !moved.has(s)) }));
          for (const [s, home] of homes) regions.find((r) => r.regionId === home)?.shards.push(s);
        }
        for (const r of regions)
          for (const s of r.shards)
            expect(consistentHashingAllocate(regions, s)?.regionId).toBe(r.regionId);
      }),
      { numRuns: 100 },
    );
  });
});

// ---- settings and facts --------------------------------------------------------------

describe("allocation settings validation", () => {
  const regions = upRegionsForSettings();
  function upRegionsForSettings(): RegionView[] {
    return build([{ status: "up", appVersion: "1.0.0", size: 3 }]);
  }
  it.each([
    [{ absoluteLimit: 0, relativeLimit: 0.1 }, "leastShardAllocation.absoluteLimit"],
    [{ absoluteLimit: 2.5, relativeLimit: 0.1 }, "leastShardAllocation.absoluteLimit"],
    [{ absoluteLimit: 10, relativeLimit: 0 }, "leastShardAllocation.relativeLimit"],
    [{ absoluteLimit: 10, relativeLimit: 1.5 }, "leastShardAllocation.relativeLimit"],
  ])("least-shard rejects %j (%s)", (settings, key) => {
    expect(() => leastShardRebalance(regions, new Set(), settings, SETTLED_CLUSTER)).toThrow(
      expect.objectContaining({ code: "CONFIG_INVALID", key }),
    );
  });

  it.each([
    [
      { rebalanceThreshold: 0, maxSimultaneousRebalance: 3 },
      "thresholdAllocation.rebalanceThreshold",
    ],
    [
      { rebalanceThreshold: 1, maxSimultaneousRebalance: 0 },
      "thresholdAllocation.maxSimultaneousRebalance",
    ],
  ])("threshold rejects %j (%s)", (settings, key) => {
    expect(() => thresholdRebalance(regions, new Set(), settings, SETTLED_CLUSTER)).toThrow(
      expect.objectContaining({ code: "CONFIG_INVALID", key }),
    );
  });

  it("consistent hashing rejects maxSimultaneousRebalance = 0", () => {
    expect(() =>
      consistentHashingRebalance(
        regions,
        new Set(),
        { maxSimultaneousRebalance: 0 },
        SETTLED_CLUSTER,
      ),
    ).toThrow(
      expect.objectContaining({ key: "consistentHashingAllocation.maxSimultaneousRebalance" }),
    );
  });
});

describe("rebalanceClusterFactsOf", () => {
  it("only looks at the coordinator's data center", () => {
    const members = [
      { address: "a", status: "up" as const, dataCenter: "dc1" },
      { address: "b", status: "joining" as const, dataCenter: "dc2" },
      { address: "c", status: "weakly-up" as const, dataCenter: "dc1" },
    ];
    expect(rebalanceClusterFactsOf(members, new Set(["b"]), "dc1")).toEqual({
      hasUnreachableMember: false,
      hasJoiningMember: true,
    });
    expect(rebalanceClusterFactsOf(members, new Set(["b"]), "dc2")).toEqual({
      hasUnreachableMember: true,
      hasJoiningMember: true,
    });
  });
});

describe("departing members and the rebalance gate", () => {
  it("leaving, exiting, down and removed members are departing; the others are not", () => {
    const departing = MEMBER_STATUSES.filter(isDepartingStatus);
    expect(departing).toEqual(["leaving", "exiting", "down", "removed"]);
  });

  it.each(["leaving", "exiting", "down", "removed"] as const)(
    "a region on a %s member gets a new shard only when no other region exists",
    (status) => {
      const regions = build([
        { status, appVersion: "2.0.0", size: 0 },
        { status: "up", appVersion: "1.0.0", size: 5 },
      ]);
      expect(mostPreferredRegion(regions)?.regionId).toBe("r1");
      expect(sortRegionsByPreference(regions).map((r) => r.regionId)).toEqual(["r1", "r0"]);
    },
  );

  it("no region is no time to rebalance, although no region differs in version", () => {
    expect(regionsHaveSameAppVersion([])).toBe(true);
    expect(isGoodTimeToRebalance([], SETTLED_CLUSTER)).toBe(false);
    const settings = { rebalanceThreshold: 1, maxSimultaneousRebalance: 3 };
    expect([...thresholdRebalance([], new Set(), settings, SETTLED_CLUSTER)]).toEqual([]);
    const limits = { absoluteLimit: 5, relativeLimit: 1 };
    expect([...leastShardRebalance([], new Set(), limits, SETTLED_CLUSTER)]).toEqual([]);
  });

  it("the threshold rebalance compares the difference of the counts, not their sum", () => {
    const settings = { rebalanceThreshold: 1, maxSimultaneousRebalance: 3 };
    const even = build([
      { status: "up", appVersion: "1.0.0", size: 2 },
      { status: "up", appVersion: "1.0.0", size: 2 },
    ]);
    expect([...thresholdRebalance(even, new Set(), settings, SETTLED_CLUSTER)]).toEqual([]);
    const uneven = build([
      { status: "up", appVersion: "1.0.0", size: 1 },
      { status: "up", appVersion: "1.0.0", size: 3 },
    ]);
    expect([...thresholdRebalance(uneven, new Set(), settings, SETTLED_CLUSTER)]).toEqual([
      "r1-s000",
    ]);
  });

  it("a bad relative limit names the allowed range", () => {
    for (const relativeLimit of [0, 1.5, Number.NaN])
      expect(() => resolveLeastShardSettings({ relativeLimit })).toThrow(
        expect.objectContaining({
          key: "leastShardAllocation.relativeLimit",
          allowed: "a number in (0, 1]",
        }),
      );
    expect(resolveLeastShardSettings({ relativeLimit: 1 }).relativeLimit).toBe(1);
  });
});
