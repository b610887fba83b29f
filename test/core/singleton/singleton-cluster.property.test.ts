/**
 * Multi-manager property test (fast-check): 2 to 5 managers, later joiners and restarts,
 * membership changes aimed at the instance (the oldest leaves, crashes, is downed while
 * alive; the 3 oldest crash) and at anyone, while the cluster exits, downs and removes
 * members on its own, and an unordered message bus reorders, duplicates and loses
 * messages. Model and assumptions: singleton-cluster-harness.ts.
 *
 * Safety, checked after every output: never two instances alive at once (an instance is
 * alive from `start-instance` until `instance-terminated` is fed back, or its node
 * crashes). Liveness, checked once the changes stop and everything has settled: exactly
 * one instance, on the oldest eligible member, whose manager is Oldest.
 *
 * The lease-guarded take-over (docs/singleton.md) runs the same property with one lease
 * (answered late, a crashed holder's lease expiring later) and alive members cut off for a
 * while; a lease that grants every request must break it.
 *
 * The last tests break the inputs on purpose (downed members treated as removed, leaving
 * members hidden) and expect the safety check to fail: the property can catch a bug.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { SingletonManagerInput } from "../../../src/core/singleton/index.js";
import {
  CHANGE_KINDS,
  type ClusterOptions,
  LEASE_CHANGE_KINDS,
  SingletonCluster,
} from "./singleton-cluster-harness.js";

const round = fc.record({
  /** Settle first, so that the change hits a running instance. */
  settleFirst: fc.boolean(),
  change: fc.constantFrom(...CHANGE_KINDS),
  pick: fc.nat({ max: 100 }),
  chaos: fc.array(fc.nat({ max: 10_000 }), { maxLength: 60 }),
});

const scenario = fc.record({
  initialSize: fc.integer({ min: 2, max: 5 }),
  removalMarginMs: fc.constantFrom(0, 0, 2_500),
  announceRemovals: fc.boolean(),
  warmup: fc.array(fc.nat({ max: 10_000 }), { maxLength: 40 }),
  rounds: fc.array(round, { maxLength: 6 }),
});

type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

/** The lease-guarded take-over: the same, plus alive members cut off for a while. */
const leaseScenario: fc.Arbitrary<Scenario> = fc.record({
  initialSize: fc.integer({ min: 2, max: 5 }),
  removalMarginMs: fc.constantFrom(0, 0, 2_500),
  announceRemovals: fc.boolean(),
  warmup: fc.array(fc.nat({ max: 10_000 }), { maxLength: 40 }),
  rounds: fc.array(
    fc.record({
      settleFirst: fc.boolean(),
      change: fc.constantFrom(...LEASE_CHANGE_KINDS),
      pick: fc.nat({ max: 100 }),
      chaos: fc.array(fc.nat({ max: 10_000 }), { maxLength: 60 }),
    }),
    { maxLength: 6 },
  ),
}) as fc.Arbitrary<Scenario>;

function explain(cluster: SingletonCluster): string {
  return `${cluster.violations.join("; ")}\ntrace:\n  ${cluster.trace.join("\n  ")}`;
}

/** Runs a scenario; returns the cluster at rest (or throws with the trace). */
function run(
  s: Scenario,
  mutateInput?: ClusterOptions["mutateInput"],
  lease: Pick<ClusterOptions, "leaseGuarded" | "grantAlways"> = {},
): SingletonCluster {
  const cluster = new SingletonCluster({ ...s, mutateInput, ...lease });
  for (const c of s.warmup) cluster.step(c);
  for (const r of s.rounds) {
    if (r.settleFirst && !cluster.settle()) throw new Error(`did not settle\n${explain(cluster)}`);
    cluster.change(r.change, r.pick);
    for (const c of r.chaos) cluster.step(c);
    if (cluster.violations.length > 0) return cluster;
  }
  if (!cluster.settle()) throw new Error(`did not settle\n${explain(cluster)}`);
  return cluster;
}

function checkRest(cluster: SingletonCluster): void {
  if (cluster.violations.length > 0) throw new Error(explain(cluster));
  const oldest = cluster.expectedOldest();
  if (oldest === undefined) throw new Error(`no eligible member left\n${explain(cluster)}`);
  const alive = cluster.aliveInstances();
  const where = cluster.nameOf(oldest);
  if (alive.length !== 1 || alive[0] !== where || cluster.stateOf(oldest) !== "Oldest")
    throw new Error(
      `at rest expected one instance on ${where} (Oldest), got [${alive.join(", ")}] with ${where} in ${cluster.stateOf(oldest)}\n${explain(cluster)}`,
    );
}

const RUNS = { numRuns: 300, seed: 0x5eed, endOnFailure: true } as const;

describe("singleton managers in a cluster (property)", () => {
  it("never two instances alive; at rest exactly one, on the oldest", () => {
    fc.assert(
      fc.property(scenario, (s) => checkRest(run(s))),
      RUNS,
    );
  });

  it("the scenarios really move the instance (hand-over and take-over both happen)", () => {
    let moved = 0;
    let handOvers = 0;
    let takeOvers = 0;
    for (const s of fc.sample(scenario, { numRuns: 300, seed: 0x5eed })) {
      const c = run(s);
      const starts = c.trace.filter((t) => t.startsWith("START")).length;
      if (starts > 1) moved++;
      if (c.trace.some((t) => t.startsWith("stop on"))) handOvers++;
      if (c.trace.some((t) => t.startsWith("crash"))) takeOvers++;
    }
    expect(moved).toBeGreaterThan(100);
    expect(handOvers).toBeGreaterThan(50);
    expect(takeOvers).toBeGreaterThan(50);
  });

  it("lease-guarded take-over: never two instances alive; at rest exactly one, on the oldest; it takes over before the removal", () => {
    fc.assert(
      fc.property(leaseScenario, (s) => checkRest(run(s, undefined, { leaseGuarded: true }))),
      RUNS,
    );
    let early = 0;
    for (const s of fc.sample(leaseScenario, { numRuns: 300, seed: 0x5eed }))
      if (run(s, undefined, { leaseGuarded: true }).takeOversBeforeRemoval > 0) early++;
    // the take-over really happens while a crashed member is still listed
    expect(early).toBeGreaterThan(20);
  });

  it("the safety check catches a broken lease (it grants every request)", () => {
    const found = fc.check(
      fc.property(
        leaseScenario,
        (s) => run(s, undefined, { leaseGuarded: true, grantAlways: true }).violations.length === 0,
      ),
      { numRuns: 300, seed: 0x5eed },
    );
    expect(found.failed).toBe(true);
  });

  const unsafe: [string, (i: SingletonManagerInput) => SingletonManagerInput][] = [
    [
      "treating downed members as removed",
      (i) =>
        i.type === "members"
          ? { ...i, oldestFirst: i.oldestFirst.filter((m) => m.status !== "down") }
          : i,
    ],
    [
      "hiding leaving and exiting members",
      (i) =>
        i.type === "members"
          ? {
              ...i,
              oldestFirst: i.oldestFirst.filter(
                (m) => m.status !== "leaving" && m.status !== "exiting",
              ),
            }
          : i,
    ],
  ];
  for (const [what, mutate] of unsafe)
    it(`the safety check catches a broken input: ${what}`, () => {
      const found = fc.check(
        fc.property(scenario, (s) => run(s, mutate).violations.length === 0),
        { numRuns: 300, seed: 0x5eed },
      );
      expect(found.failed).toBe(true);
    });
});
