/** The ASCII fast path of murmur3OfString gives exactly the hash of the UTF-8 bytes. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { murmur3_32, murmur3OfString, utf8Encode } from "../../src/base/hash.js";

describe("murmur3OfString", () => {
  it("equals murmur3 of the UTF-8 encoding for any string (ASCII fast path or not)", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ maxLength: 300 }), fc.string({ unit: "grapheme", maxLength: 40 })),
        fc.integer(),
        (s, seed) => {
          expect(murmur3OfString(s, seed)).toBe(murmur3_32(utf8Encode(s), seed));
        },
      ),
      { numRuns: 2_000, seed: 42 },
    );
  });
});
