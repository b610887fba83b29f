/**
 * Vector clock properties (fast-check): comparison agrees with the pointwise definition
 * and is antisymmetric; merge is a join (commutative, associative, idempotent, an upper
 * bound of both inputs); the representation does not depend on key insertion order.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AssertionError } from "../../../src/base/assert.js";
import {
  ClockOrdering,
  clockCounter,
  clockToRecord,
  compareClocks,
  emptyVectorClock,
  incrementClock,
  isAfter,
  isBefore,
  isConcurrent,
  isSame,
  isSameOrAfter,
  mergeClocks,
  pruneClock,
  pruneClockNodes,
  type VectorClock,
  vectorClockOf,
} from "../../../src/core/membership/vector-clock.js";

const KEYS = ["a", "b", "c", "d", "__proto__", "10", "9"];
const arbVersions = fc.dictionary(fc.constantFrom(...KEYS), fc.integer({ min: 0, max: 4 }));
const arbClock = arbVersions.map((v) => vectorClockOf(Object.entries(v)));

const FLIP: Readonly<Record<ClockOrdering, ClockOrdering>> = {
  before: "after",
  after: "before",
  same: "same",
  concurrent: "concurrent",
};

/** The definition, over the union of keys, independent of the implementation. */
function referenceCompare(a: VectorClock, b: VectorClock): ClockOrdering {
  const keys = new Set([...a.entries.map((e) => e[0]), ...b.entries.map((e) => e[0])]);
  let less = false;
  let greater = false;
  for (const k of keys) {
    const x = clockCounter(a, k);
    const y = clockCounter(b, k);
    if (x < y) less = true;
    if (x > y) greater = true;
  }
  if (less && greater) return "concurrent";
  return less ? "before" : greater ? "after" : "same";
}

describe("vector clock", () => {
  it("pairs already in clock order give the same clock as any other order; a frozen array of frozen pairs is kept as is", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom(...KEYS), fc.integer({ min: 0, max: 4 })), {
          maxLength: 10,
        }),
        (pairs) => {
          const unique = [...new Map(pairs).entries()];
          const general = vectorClockOf(Object.fromEntries(unique));
          const sorted = [...unique].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
          expect(vectorClockOf(sorted)).toEqual(general);
          expect(vectorClockOf([...sorted].reverse())).toEqual(general);
          for (const e of vectorClockOf(sorted).entries) expect(Object.isFrozen(e)).toBe(true);
          const positive = sorted.filter((e) => e[1] > 0);
          const frozen = Object.freeze(positive.map((e) => Object.freeze([e[0], e[1]] as const)));
          const shared = vectorClockOf(frozen);
          expect(shared.entries).toBe(frozen);
          expect(shared).toEqual(general);
        },
      ),
    );
    // sorted but invalid: still refused
    expect(() =>
      vectorClockOf([
        ["a", 1],
        ["a", 2],
      ]),
    ).toThrow(AssertionError);
    expect(() =>
      vectorClockOf([
        ["a", 1],
        ["b", -1],
      ]),
    ).toThrow(AssertionError);
    expect(() =>
      vectorClockOf([
        ["a", 1],
        ["b", 1.5],
      ]),
    ).toThrow(AssertionError);
    expect(
      vectorClockOf([
        ["a", 0],
        ["b", 2],
      ]).entries,
    ).toEqual([["b", 2]]);
  });

  it("compare agrees with the pointwise definition", () => {
    fc.assert(
      fc.property(arbClock, arbClock, (a, b) => {
        expect(compareClocks(a, b)).toBe(referenceCompare(a, b));
      }),
    );
  });

  it("compare is antisymmetric and reflexive", () => {
    fc.assert(
      fc.property(arbClock, arbClock, (a, b) => {
        expect(compareClocks(b, a)).toBe(FLIP[compareClocks(a, b)]);
        expect(isBefore(a, b)).toBe(isAfter(b, a));
        expect(isSame(a, a)).toBe(true);
        expect(isConcurrent(a, b)).toBe(isConcurrent(b, a));
      }),
    );
  });

  it("merge is commutative, associative and idempotent", () => {
    fc.assert(
      fc.property(arbClock, arbClock, arbClock, (a, b, c) => {
        expect(mergeClocks(a, b)).toEqual(mergeClocks(b, a));
        expect(mergeClocks(mergeClocks(a, b), c)).toEqual(mergeClocks(a, mergeClocks(b, c)));
        expect(mergeClocks(a, a)).toEqual(a);
      }),
    );
  });

  it("merge is the least upper bound of both inputs", () => {
    fc.assert(
      fc.property(arbClock, arbClock, (a, b) => {
        const m = mergeClocks(a, b);
        expect(isSameOrAfter(m, a)).toBe(true);
        expect(isSameOrAfter(m, b)).toBe(true);
        for (const [k, v] of m.entries)
          expect(v).toBe(Math.max(clockCounter(a, k), clockCounter(b, k)));
      }),
    );
  });

  it("increment moves strictly after; prune forgets one key only", () => {
    fc.assert(
      fc.property(arbClock, fc.constantFrom(...KEYS), (a, k) => {
        const next = incrementClock(a, k);
        expect(compareClocks(next, a)).toBe(ClockOrdering.After);
        expect(clockCounter(next, k)).toBe(clockCounter(a, k) + 1);
        const pruned = pruneClock(next, k);
        expect(clockCounter(pruned, k)).toBe(0);
        expect(pruneClock(pruned, k)).toBe(pruned);
        expect(pruneClockNodes(next, [k])).toEqual(pruned);
        for (const [key, v] of pruned.entries) expect(v).toBe(clockCounter(next, key));
      }),
    );
  });

  it("the value does not depend on key insertion order", () => {
    const arbPermuted = arbVersions.chain((versions) => {
      const entries = Object.entries(versions);
      const n = entries.length;
      return fc
        .shuffledSubarray(entries, { minLength: n, maxLength: n })
        .map((permutation) => ({ entries, permutation }));
    });
    fc.assert(
      fc.property(arbPermuted, ({ entries, permutation }) => {
        const incrementAll = (clock: VectorClock, [k, v]: [string, number]) =>
          Array.from({ length: v }).reduce<VectorClock>((c) => incrementClock(c, k), clock);
        const built = permutation.reduce(incrementAll, emptyVectorClock);
        expect(built).toEqual(vectorClockOf(entries));
        expect(vectorClockOf(permutation)).toEqual(vectorClockOf(entries));
      }),
    );
  });

  it("keeps arbitrary keys, including prototype names, as plain data", () => {
    const c = incrementClock(emptyVectorClock, "__proto__");
    expect(clockCounter(c, "__proto__")).toBe(1);
    expect(Object.keys(clockToRecord(c))).toEqual(["__proto__"]);
    expect(Object.isFrozen(c) && Object.isFrozen(c.entries)).toBe(true);
  });

  it("rejects negative or fractional counters and duplicate keys", () => {
    expect(() => vectorClockOf({ a: -1 })).toThrow(AssertionError);
    expect(() => vectorClockOf({ a: 1.5 })).toThrow(AssertionError);
    expect(() =>
      vectorClockOf([
        ["a", 1],
        ["a", 2],
      ]),
    ).toThrow(AssertionError);
    expect(vectorClockOf({ a: 0 }).entries).toEqual([]);
  });
});
