/**
 * The vector-clock predicates and checks one by one (src/core/membership/vector-clock.ts):
 * each predicate false as well as true, the queries of a clock, a prune that removes
 * nothing returning the clock itself, and the messages of the checks.
 */
import { describe, expect, it } from "vitest";
import {
  clockHasNode,
  clockNodes,
  clockSize,
  emptyVectorClock,
  hasEntries,
  incrementClock,
  isAfter,
  isBefore,
  isConcurrent,
  isSame,
  isSameOrAfter,
  pruneClockNodes,
  vectorClockOf,
} from "../../../src/core/membership/vector-clock.js";

const v = (r: Record<string, number>) => vectorClockOf(r);

describe("vector clock queries", () => {
  it("each predicate holds for exactly its ordering", () => {
    const before = v({ a: 1 });
    const after = v({ a: 2 });
    const left = v({ a: 2, b: 1 });
    const right = v({ a: 3 });
    const table = [
      [before, after, "before"],
      [after, before, "after"],
      [before, v({ a: 1 }), "same"],
      [left, right, "concurrent"],
    ] as const;
    for (const [x, y, ordering] of table) {
      expect(
        [isBefore(x, y), isAfter(x, y), isSame(x, y), isConcurrent(x, y), isSameOrAfter(x, y)],
        ordering,
      ).toEqual([
        ordering === "before",
        ordering === "after",
        ordering === "same",
        ordering === "concurrent",
        ordering === "same" || ordering === "after",
      ]);
    }
  });

  it("answers size, nodes and membership of keys", () => {
    const c = v({ b: 2, a: 1, z: 0 });
    expect(clockSize(c)).toBe(2);
    expect(clockNodes(c)).toEqual(["a", "b"]);
    expect([clockHasNode(c, "a"), clockHasNode(c, "z"), clockHasNode(c, "c")]).toEqual([
      true,
      false,
      false,
    ]);
    expect(clockSize(emptyVectorClock)).toBe(0);
  });

  it("pruning keys that are absent returns the clock itself", () => {
    const c = v({ a: 1, b: 2 });
    expect(pruneClockNodes(c, ["x", "y"])).toBe(c);
    expect(pruneClockNodes(c, [])).toBe(c);
    expect(clockNodes(pruneClockNodes(c, ["a", "x"]))).toEqual(["b"]);
  });

  it("names the bad counter, the duplicate key and the overflowing key", () => {
    expect(() => v({ k: -2 })).toThrow("invalid clock counter k=-2");
    expect(() =>
      vectorClockOf([
        ["b", 1],
        ["a", 1],
        ["b", 3],
      ]),
    ).toThrow("duplicate clock key b");
    expect(() => incrementClock(v({ big: Number.MAX_SAFE_INTEGER }), "big")).toThrow(
      "clock counter overflow for big",
    );
  });

  it("hasEntries: exactly the clock's entries in its order, nothing else", () => {
    const c = vectorClockOf({ a: 1, b: 2 });
    expect(hasEntries(c, c.entries)).toBe(true);
    expect(
      hasEntries(c, [
        ["a", 1],
        ["b", 2],
      ]),
    ).toBe(true);
    expect(
      hasEntries(c, [
        ["a", 1],
        ["b", 3],
      ]),
    ).toBe(false);
    expect(
      hasEntries(c, [
        ["a", 1],
        ["c", 2],
      ]),
    ).toBe(false);
    expect(
      hasEntries(c, [
        ["b", 2],
        ["a", 1],
      ]),
    ).toBe(false);
    expect(hasEntries(c, [["a", 1]])).toBe(false);
    expect(
      hasEntries(c, [
        ["a", 1],
        ["b", 2],
        ["c", 0],
      ]),
    ).toBe(false);
    expect(hasEntries(vectorClockOf({}), [])).toBe(true);
  });
});
