/**
 * Known-answer tests for the hashes in src/base/hash.ts. The murmur3 values are the
 * widely published MurmurHash3 x86_32 vectors (SMHasher / Python mmh3 / Wikipedia); the
 * murmur2 values are Kafka's; Java hashCode values are what the JVM returns.
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import {
  javaStringHashCode,
  murmur2,
  murmur3_32,
  murmur3OfString,
  utf8Encode,
} from "../../src/base/hash.js";

beforeAll(() => {
  fc.configureGlobal({ seed: 0x5eed });
});

describe("murmur3_32 (x86_32), unsigned result", () => {
  it.each([
    ["", 0, 0],
    ["", 1, 0x514e28b7],
    ["", 0xffffffff, 0x81f16f39],
    ["hello", 0, 0x248bfa47],
    ["foo", 0, 4138058784], // mmh3.hash("foo") == -156908512 signed
    ["foo", 42, 0xb12f489e], // mmh3.hash("foo", 42) == -1322301282 signed
    ["abc", 0, 0xb3dd93fa],
    ["a", 0x9747b28c, 0x7fa09ea6],
    ["ab", 0x9747b28c, 0x74875592],
    ["abc", 0x9747b28c, 0xc84a62dd],
    ["abcd", 0x9747b28c, 0xf0478627],
    ["aaaa", 0x9747b28c, 0x5a97808a],
    ["Hello, world!", 0x9747b28c, 0x24884cba],
    ["The quick brown fox jumps over the lazy dog", 0, 0x2e4ff723],
    ["The quick brown fox jumps over the lazy dog", 0x9747b28c, 0x2fa826cd],
  ] as const)("murmur3(%j, seed %i)", (s, seed, expected) => {
    expect(murmur3OfString(s, seed)).toBe(expected);
  });

  it("hashes raw bytes (four zero bytes)", () => {
    expect(murmur3_32(new Uint8Array(4), 0)).toBe(0x2362f9de);
  });

  it("always returns a uint32", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), fc.nat(), (bytes, seed) => {
        const h = murmur3_32(bytes, seed);
        return Number.isInteger(h) && h >= 0 && h <= 0xffffffff;
      }),
    );
  });
});

describe("murmur2 (Kafka)", () => {
  it.each([
    ["1", -1993445489],
    ["12", 126087238],
    ["123", -267702483],
    ["1234", -1614185708],
    ["12345", -1188365604],
  ] as const)("murmur2(%j)", (s, expected) => {
    expect(murmur2(utf8Encode(s))).toBe(expected);
  });
});

describe("javaStringHashCode", () => {
  it.each([
    ["", 0],
    ["a", 97],
    ["hello", 99162322],
    ["Aa", 2112],
    ["BB", 2112],
    ["polygenelubricants", -2147483648],
    ["\u{1F600}", 1772899], // two UTF-16 surrogates, not one code point
  ] as const)("hashCode(%j)", (s, expected) => {
    expect(javaStringHashCode(s)).toBe(expected);
  });

  it("wraps like int32 arithmetic", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 40 }), (s) => {
        let h = 0n;
        for (let i = 0; i < s.length; i++) h = BigInt.asIntN(32, h * 31n + BigInt(s.charCodeAt(i)));
        return javaStringHashCode(s) === Number(h);
      }),
      { numRuns: 300 },
    );
  });
});

describe("utf8Encode", () => {
  it("encodes multi-byte characters", () => {
    expect(Array.from(utf8Encode("ü\u{1F600}"))).toEqual([195, 188, 240, 159, 152, 128]);
  });
});
