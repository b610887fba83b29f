/** compareAppVersion: numeric segments, missing segments as 0, pre-release suffixes. */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { compareAppVersion } from "../../src/base/app-version.js";

beforeAll(() => {
  fc.configureGlobal({ seed: 0x5eed });
});

describe("compareAppVersion", () => {
  it.each([
    ["1.0.1", "1.0.0", 1],
    ["1.0.0", "1.0.1", -1],
    ["1.0.0", "1.0.0", 0],
    ["1.10.0", "1.9.0", 1],
    ["1.0", "1.0.0", 0],
    ["01.1", "1.1", 0],
    ["2", "1.99.99", 1],
    ["", "0.0.0", 0],
    ["1.0.0-M1", "1.0.0", -1],
    ["1.0.0-M1", "1.0.0-M2", -1],
    ["1.0.0-M9", "0.9.9", 1],
    ["1.beta", "1.alpha", 1],
    ["1.beta", "1.0", -1],
    ["100000000000000000000001", "100000000000000000000000", 1],
  ] as const)("%j vs %j -> %i", (a, b, expected) => {
    expect(compareAppVersion(a, b)).toBe(expected);
    expect(compareAppVersion(b, a)).toBe(-expected || 0);
  });

  const version = fc
    .array(
      fc.oneof(
        fc.nat({ max: 20 }).map(String),
        fc.constantFrom("0-M1", "0-M2", "1-RC1", "beta", "alpha", "007", "10"),
      ),
      { maxLength: 4 },
    )
    .map((xs) => xs.join("."));

  it("is a total preorder (antisymmetric and transitive), so it is safe to sort with", () => {
    fc.assert(
      fc.property(version, version, version, (a, b, c) => {
        const ab = compareAppVersion(a, b);
        expect(compareAppVersion(b, a)).toBe(-ab || 0);
        if (ab <= 0 && compareAppVersion(b, c) <= 0)
          expect(compareAppVersion(a, c)).toBeLessThanOrEqual(0);
      }),
      { numRuns: 2000 },
    );
  });
});
