import { describe, expect, it } from "vitest";
import { compareByKey, compareStrings } from "../../src/base/compare.js";

describe("compareStrings", () => {
  it("answers -1, 0 or 1 by UTF-16 code units, whatever the locale", () => {
    expect(compareStrings("a", "b")).toBe(-1);
    expect(compareStrings("b", "a")).toBe(1);
    expect(compareStrings("a", "a")).toBe(0);
    expect(compareStrings("", "a")).toBe(-1);
    expect(compareStrings("ab", "a")).toBe(1);
    // code units, not a locale's collation: upper case before lower case, "Z" before "a"
    expect(compareStrings("Z", "a")).toBe(-1);
    expect(compareStrings("é", "f")).toBe(1);
    // a character outside the BMP is two code units, the first a high surrogate (0xD83D)
    expect(compareStrings("\u{1F600}", "\uFFFF")).toBe(-1);
  });

  it("sorts as a consistent comparator", () => {
    const words = ["shard-10", "shard-2", "Shard-1", "shard-1", "", "shard-10"];
    expect([...words].sort(compareStrings)).toEqual([
      "",
      "Shard-1",
      "shard-1",
      "shard-10",
      "shard-10",
      "shard-2",
    ]);
  });
});

describe("compareByKey", () => {
  it("orders entries by their key only", () => {
    expect(compareByKey(["a", 2], ["b", 1])).toBe(-1);
    expect(compareByKey(["b", 1], ["a", 2])).toBe(1);
    expect(compareByKey(["a", 1], ["a", 2])).toBe(0);
    const entries: [string, number][] = [
      ["c", 1],
      ["a", 2],
      ["b", 3],
    ];
    expect(entries.sort(compareByKey)).toEqual([
      ["a", 2],
      ["b", 3],
      ["c", 1],
    ]);
  });
});
