/**
 * Conformance of the shard allocation strategies with
 * reference-vectors/least-shard-allocation.json (Pekko LeastShardAllocationStrategySpec,
 * DeprecatedLeastShardAllocationStrategySpec, LeastShardAllocationStrategyRandomizedSpec).
 * Every case is a named test; every `expected…` value is asserted. `derivedAllocations`
 * are used as the chained input of the next step (as the README says) and, by choice,
 * also compared with this adapter's own afterRebalance result, so the chain is checked.
 * The randomized properties run under Xoshiro128 with fixed seeds; a failure names the seed.
 */
import { describe, expect, it } from "vitest";
import { Xoshiro128 } from "../../src/base/prng.js";
import {
  type LeastShardSettings,
  leastShardAllocate,
  leastShardRebalance,
} from "../../src/core/coordinator/allocation/least-shard.js";
import { sortRegionsByPreference } from "../../src/core/coordinator/allocation/region-preference.js";
import {
  type RebalanceClusterFacts,
  type RegionView,
  rebalanceClusterFactsOf,
  SETTLED_CLUSTER,
} from "../../src/core/coordinator/allocation/region-view.js";
import { thresholdRebalance } from "../../src/core/coordinator/allocation/threshold-rebalance.js";
import { isMemberStatus, type MemberStatus } from "../../src/core/membership/member-status.js";
import { casesOfKind, loadVectors } from "./vectors.js";

interface VMember {
  readonly address: string;
  readonly status: string;
  readonly appVersion: string;
  readonly dataCenter: string;
}
interface VAllocation {
  readonly region: string;
  readonly regionAddress: string;
  readonly shards: readonly string[];
}
type VStrategy =
  | { readonly type: "least-shard"; readonly absoluteLimit: number; readonly relativeLimit: number }
  | {
      readonly type: "deprecated-threshold";
      readonly rebalanceThreshold: number;
      readonly maxSimultaneousRebalance: number;
    };
type VStep =
  | {
      readonly call: "allocateShard";
      readonly allocations: readonly VAllocation[];
      readonly requester: string;
      readonly shardId: string;
      readonly expected: { readonly region: string };
    }
  | {
      readonly call: "rebalance";
      readonly allocations: readonly VAllocation[];
      readonly rebalanceInProgress: readonly string[];
      readonly expected: { readonly shards: readonly string[] };
      readonly afterRebalance?: {
        readonly expectedCountsInAllocationOrder?: readonly number[];
        readonly expectedCountsSortedAscending?: readonly number[];
        readonly derivedAllocations: readonly VAllocation[];
      };
      readonly allocationsProvenance?: string;
    };
type AllocCase =
  | {
      readonly name: string;
      readonly kind: "allocationStrategy";
      readonly strategy: VStrategy;
      readonly cluster: {
        readonly members: readonly VMember[];
        readonly unreachable: readonly string[];
        readonly selfMember: string;
      };
      readonly steps: readonly VStep[];
    }
  | {
      readonly name: string;
      readonly kind: "suitabilityOrdering";
      readonly entries: readonly {
        readonly region: string;
        readonly member: VMember;
        readonly shards: readonly string[];
      }[];
      readonly expectedOrder: readonly string[];
    }
  | {
      readonly name: string;
      readonly kind: "randomizedProperty";
      readonly strategy: {
        readonly absoluteLimit: number | string;
        readonly relativeLimit: number | string;
      };
      readonly maxRegions: number;
      readonly maxShardsPerRegion: number;
      readonly expectedMaxRounds: number;
      readonly iterations: number;
    };

const file = loadVectors<AllocCase>("least-shard-allocation.json");

/** Pekko status names ("Up", "WeaklyUp", "PreparingForShutdown") -> shardkit's. */
function statusOf(pekko: string): MemberStatus {
  const s = pekko.replace(/([a-z])([A-Z])/g, "$1-$2").toLowerCase();
  if (!isMemberStatus(s)) throw new Error(`unknown member status ${pekko}`);
  return s;
}

/** Mutable region views (the helper appends in place; the strategies only read). */
interface MutableRegion extends RegionView {
  readonly shards: string[];
}

/** Regions attributed to members by address; a region with no such member is ignored. */
function regionsOf(
  allocations: readonly VAllocation[],
  members: readonly VMember[],
): MutableRegion[] {
  return allocations.flatMap((a) => {
    const m = members.find((x) => x.address === a.regionAddress);
    if (m === undefined) return [];
    const member = { address: m.address, status: statusOf(m.status), appVersion: m.appVersion };
    return [{ regionId: a.region, member, shards: [...a.shards] }];
  });
}

function factsOf(c: Extract<AllocCase, { kind: "allocationStrategy" }>): RebalanceClusterFacts {
  const members = c.cluster.members.map((m) => ({ ...m, status: statusOf(m.status) }));
  const self = members.find((m) => m.address === c.cluster.selfMember);
  if (self === undefined) throw new Error("selfMember not among members");
  return rebalanceClusterFactsOf(members, new Set(c.cluster.unreachable), self.dataCenter);
}

const byString = (a: string, b: string) => (a === b ? 0 : a < b ? -1 : 1);

/**
 * The Pekko test helper: remove the moved shards, then re-allocate them one by one in
 * ascending string order with allocateShard on the current map, appending to the region.
 */
function afterRebalance(
  regions: readonly RegionView[],
  moved: ReadonlySet<string>,
): MutableRegion[] {
  const current: MutableRegion[] = regions.map((r) => ({
    ...r,
    shards: r.shards.filter((s) => !moved.has(s)),
  }));
  for (const shard of [...moved].sort(byString)) {
    const target = leastShardAllocate(current) as MutableRegion | undefined;
    if (target === undefined) throw new Error("no region to allocate to");
    target.shards.push(shard);
  }
  return current;
}

function rebalanceWith(
  strategy: VStrategy,
  regions: readonly RegionView[],
  inProgress: ReadonlySet<string>,
  facts: RebalanceClusterFacts,
): ReadonlySet<string> {
  if (strategy.type === "least-shard") {
    const { absoluteLimit, relativeLimit } = strategy;
    return leastShardRebalance(regions, inProgress, { absoluteLimit, relativeLimit }, facts);
  }
  const { rebalanceThreshold, maxSimultaneousRebalance } = strategy;
  return thresholdRebalance(
    regions,
    inProgress,
    { rebalanceThreshold, maxSimultaneousRebalance },
    facts,
  );
}

const asPlain = (regions: readonly RegionView[]) =>
  regions.map((r) => ({
    region: r.regionId,
    regionAddress: r.member.address,
    shards: [...r.shards],
  }));

function checkAfterRebalance(
  step: Extract<VStep, { call: "rebalance" }>,
  regions: readonly RegionView[],
  result: ReadonlySet<string>,
): void {
  const after = step.afterRebalance;
  if (after === undefined) return;
  const next = afterRebalance(regions, result);
  const counts = next.map((r) => r.shards.length);
  if (after.expectedCountsInAllocationOrder)
    expect(counts).toEqual(after.expectedCountsInAllocationOrder);
  if (after.expectedCountsSortedAscending)
    expect([...counts].sort((a, b) => a - b)).toEqual(after.expectedCountsSortedAscending);
  expect(
    after.expectedCountsInAllocationOrder ?? after.expectedCountsSortedAscending,
  ).toBeDefined();
  expect(asPlain(next), "adapter afterRebalance vs derivedAllocations").toEqual(
    after.derivedAllocations,
  );
}

/** Runs every step of an allocationStrategy case; returns the number of calls made. */
function runStrategyCase(c: Extract<AllocCase, { kind: "allocationStrategy" }>): number {
  const facts = factsOf(c);
  let previousDerived: readonly VAllocation[] | undefined;
  c.steps.forEach((step, i) => {
    const regions = regionsOf(step.allocations, c.cluster.members);
    expect(regions, `step ${i}: every region maps to a member`).toHaveLength(
      step.allocations.length,
    );
    if (step.call === "allocateShard") {
      expect(leastShardAllocate(regions)?.regionId, `step ${i}`).toBe(step.expected.region);
      return;
    }
    if (step.allocationsProvenance !== undefined)
      expect(step.allocations, `step ${i} chains the previous derived map`).toEqual(
        previousDerived,
      );
    const result = rebalanceWith(c.strategy, regions, new Set(step.rebalanceInProgress), facts);
    expect([...result].sort(byString), `step ${i}`).toEqual(
      [...step.expected.shards].sort(byString),
    );
    expect(result.size, `step ${i}: a set, no duplicates`).toBe(step.expected.shards.length);
    checkAfterRebalance(step, regions, result);
    previousDerived = step.afterRebalance?.derivedAllocations;
  });
  return c.steps.length;
}

// ---- randomized property -------------------------------------------------------------

const SEEDS = [1, 2, 3, 4, 5, 0x5eed, 0xc0ffee] as const;
const uniformInt = (rng: Xoshiro128, n: number) => Math.floor(rng.next() * n);

function randomRegions(rng: Xoshiro128, maxRegions: number, maxShards: number): MutableRegion[] {
  const count = 1 + uniformInt(rng, maxRegions);
  const regions: MutableRegion[] = [];
  for (let i = 1; i <= count; i++) {
    const name = `region${String(i).padStart(3, "0")}`;
    const n = uniformInt(rng, maxShards);
    const shards = Array.from({ length: n }, (_, k) => `${name}-${String(k + 1).padStart(3, "0")}`);
    const member = {
      address: `pekko://sys@127.0.0.1:${i}`,
      status: "up" as const,
      appVersion: "1.0.0",
    };
    regions.push({ regionId: name, member, shards });
  }
  // Pekko iterates a hash map here, so the property must hold for ANY region order.
  for (let i = regions.length - 1; i > 0; i--) {
    const j = uniformInt(rng, i + 1);
    [regions[i], regions[j]] = [regions[j] as MutableRegion, regions[i] as MutableRegion];
  }
  return regions;
}

function randomSettings(
  rng: Xoshiro128,
  s: Extract<AllocCase, { kind: "randomizedProperty" }>["strategy"],
): LeastShardSettings {
  const absoluteLimit =
    typeof s.absoluteLimit === "number" ? s.absoluteLimit : 3 + uniformInt(rng, 7) + 3;
  const relativeLimit =
    typeof s.relativeLimit === "number" ? s.relativeLimit : 0.05 + rng.next() * 0.95;
  return { absoluteLimit, relativeLimit };
}

const spread = (regions: readonly RegionView[]) => {
  const sizes = regions.map((r) => r.shards.length);
  return Math.max(...sizes) - Math.min(...sizes);
};
const totalOf = (regions: readonly RegionView[]) =>
  regions.reduce((n, r) => n + r.shards.length, 0);

/** One iteration: rounds of rebalance + re-allocation must reach max - min <= 1. */
function convergeOnce(
  c: Extract<AllocCase, { kind: "randomizedProperty" }>,
  rng: Xoshiro128,
  where: string,
): void {
  const settings = randomSettings(rng, c.strategy);
  let current = randomRegions(rng, c.maxRegions, c.maxShardsPerRegion);
  const total = totalOf(current);
  for (let round = 1; round <= c.expectedMaxRounds; round++) {
    const moved = leastShardRebalance(current, new Set(), settings, SETTLED_CLUSTER);
    current = afterRebalance(current, moved);
    expect(totalOf(current), `${where} round ${round}: shard count`).toBe(total);
    if (spread(current) <= 1) return;
  }
  const sizes = current.map((r) => r.shards.length).join(",");
  expect.fail(
    `${where}: not balanced after ${c.expectedMaxRounds} rounds (${sizes}), settings ${JSON.stringify(settings)}`,
  );
}

// ---- tests ---------------------------------------------------------------------------

describe("least-shard-allocation.json", () => {
  it("exercises all 43 cases (33 strategy cases with 63 calls, 2 orderings, 8 properties)", () => {
    expect(file.cases).toHaveLength(43);
    const strategyCases = casesOfKind(file.cases, "allocationStrategy");
    expect(strategyCases).toHaveLength(33);
    expect(strategyCases.reduce((n, c) => n + c.steps.length, 0)).toBe(63);
    expect(casesOfKind(file.cases, "suitabilityOrdering")).toHaveLength(2);
    expect(casesOfKind(file.cases, "randomizedProperty")).toHaveLength(8);
  });

  it.each(casesOfKind(file.cases, "allocationStrategy").map((c) => [c.name, c] as const))(
    "%s",
    (_, c) => {
      expect(runStrategyCase(c)).toBe(c.steps.length);
    },
  );

  it.each(casesOfKind(file.cases, "suitabilityOrdering").map((c) => [c.name, c] as const))(
    "%s",
    (_, c) => {
      const regions = regionsOf(
        c.entries.map((e) => ({
          region: e.region,
          regionAddress: e.member.address,
          shards: e.shards,
        })),
        c.entries.map((e) => e.member),
      );
      expect(sortRegionsByPreference(regions).map((r) => r.regionId)).toEqual(c.expectedOrder);
    },
  );

  it.each(casesOfKind(file.cases, "randomizedProperty").map((c) => [c.name, c] as const))(
    "%s",
    (_, c) => {
      for (const seed of SEEDS) {
        const rng = new Xoshiro128(seed);
        for (let i = 0; i < c.iterations; i++) convergeOnce(c, rng, `seed=${seed} iteration=${i}`);
      }
    },
  );
});
