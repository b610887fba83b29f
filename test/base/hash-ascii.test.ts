/**
 * The ASCII fast paths of murmur3OfString and murmur3OfJoined give exactly the hash of
 * the UTF-8 bytes (of the joined string).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  Murmur3Stream,
  murmur3_32,
  murmur3OfJoined,
  murmur3OfString,
  utf8Encode,
} from "../../src/base/hash.js";

const someString = fc.oneof(
  fc.string({ maxLength: 300 }),
  fc.string({ unit: "grapheme", maxLength: 40 }),
);

describe("murmur3OfString", () => {
  it("equals murmur3 of the UTF-8 encoding for any string (ASCII fast path or not)", () => {
    fc.assert(
      fc.property(someString, fc.integer(), (s, seed) => {
        expect(murmur3OfString(s, seed)).toBe(murmur3_32(utf8Encode(s), seed));
      }),
      { numRuns: 2_000, seed: 42 },
    );
  });
});

describe("murmur3OfJoined", () => {
  it("equals murmur3OfString of the joined strings, for any strings, separator and seed", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.array(someString, { maxLength: 30 }),
          // long enough to grow the reused buffer
          fc.array(fc.string({ minLength: 200, maxLength: 400 }), { minLength: 20, maxLength: 40 }),
        ),
        fc.oneof(fc.constantFrom("\n", "", "::"), fc.string({ maxLength: 3 })),
        fc.integer(),
        (parts, separator, seed) => {
          expect(murmur3OfJoined(parts.length, (i) => parts[i] as string, separator, seed)).toBe(
            murmur3OfString(parts.join(separator), seed),
          );
        },
      ),
      { numRuns: 1_000, seed: 43 },
    );
  });
});

describe("Murmur3Stream", () => {
  it("fed ASCII pieces, taken up again from any snapshot: murmur3 of the whole text", () => {
    const ascii = fc.string({ maxLength: 20 }).map((x) => x.replace(/[^\x20-\x7e]/g, "a"));
    fc.assert(
      fc.property(
        fc.array(ascii, { maxLength: 12 }),
        fc.nat(12),
        fc.integer(),
        (parts, at, seed) => {
          const stream = new Murmur3Stream(seed);
          let resumed = stream;
          parts.forEach((p, i) => {
            // from piece `at` on, a stream taken up from a snapshot
            if (i === at) resumed = Murmur3Stream.from(stream.snapshot());
            expect(stream.feedAscii(p)).toBe(true);
            if (resumed !== stream) resumed.feedAscii(p);
          });
          const expected = murmur3_32(utf8Encode(parts.join("")), seed);
          expect(stream.finish()).toBe(expected);
          expect(resumed.finish()).toBe(expected);
        },
      ),
      { numRuns: 1_000, seed: 44 },
    );
  });

  it("refuses a string that is not ASCII, and feeds nothing of it", () => {
    const s = new Murmur3Stream();
    s.feedAscii("abc");
    expect(s.feedAscii("dé")).toBe(false);
    expect(s.finish()).toBe(murmur3OfString("abc"));
  });
});
