/**
 * Conformance of the entity id -> shard id functions with
 * reference-vectors/hashcode-extractor.json (Pekko HashCodeMessageExtractor, Murmur2 and
 * Murmur2MessageExtractor). Every case is a named test and every expected value asserted.
 *
 * Intended difference: shardkit's DEFAULT extractor is murmur3 (murmur3ShardId), not Java
 * String.hashCode. The hashCodeShardId cases therefore check the Java-compatible option
 * (`hashCodeShardId`, algorithm "java-hash-code") against the vector AND pin what the
 * default gives for the same id: a non-negative id, taken from a table computed with an
 * independent MurmurHash3 x86_32 implementation (Python), not from the code under test.
 */
import { describe, expect, it } from "vitest";
import { javaStringHashCode, murmur2, utf8Encode } from "../../src/base/hash.js";
import {
  DEFAULT_SHARD_ID_ALGORITHM,
  hashCodeShardId,
  murmur2ShardId,
  murmur3ShardId,
  shardIdFunctions,
} from "../../src/core/sharding/shard-id.js";
import { casesOfKind, loadVectors } from "./vectors.js";

type ShardCounts = "7" | "10" | "100" | "1000";
type ExpectedIds = Readonly<Record<ShardCounts, string>>;

type HashCase =
  | {
      readonly name: string;
      readonly kind: "hashCodeShardId";
      readonly entityId: string;
      readonly entityIdUtf16CodeUnits: readonly number[];
      readonly javaStringHashCode: number;
      readonly expectedShardIdByNumberOfShards: ExpectedIds;
    }
  | {
      readonly name: string;
      readonly kind: "murmur2Hash";
      readonly input: string;
      readonly expectedMurmur2OfUtf8: number;
    }
  | {
      readonly name: string;
      readonly kind: "murmur2ShardId";
      readonly entityId: string;
      readonly utf8Bytes: readonly number[];
      readonly murmur2: number;
      readonly expectedShardIdByNumberOfShards: ExpectedIds;
    };

const file = loadVectors<HashCase>("hashcode-extractor.json");

/**
 * shardkit's default (murmur3) shard ids for the hashCodeShardId entity ids, computed
 * outside this code base with an independent MurmurHash3 x86_32 (Python, checked against
 * the published "hello" and "foo"/42 values). Documented in docs/conformance.md.
 */
const MURMUR3_DEFAULT_SHARD_IDS: ReadonlyMap<string, ExpectedIds> = new Map<string, ExpectedIds>([
  ["", { "7": "0", "10": "0", "100": "0", "1000": "0" }],
  ["a", { "7": "4", "10": "0", "100": "50", "1000": "850" }],
  ["A", { "7": "3", "10": "2", "100": "2", "1000": "502" }],
  ["1", { "7": "5", "10": "9", "100": "39", "1000": "939" }],
  ["42", { "7": "3", "10": "4", "100": "14", "1000": "814" }],
  ["entity-1", { "7": "1", "10": "6", "100": "76", "1000": "276" }],
  ["entity-2", { "7": "1", "10": "4", "100": "14", "1000": "414" }],
  ["user-42", { "7": "2", "10": "0", "100": "80", "1000": "80" }],
  ["counter-123", { "7": "3", "10": "9", "100": "49", "1000": "649" }],
  ["hello", { "7": "6", "10": "1", "100": "51", "1000": "351" }],
  ["Aa", { "7": "6", "10": "1", "100": "1", "1000": "801" }],
  ["BB", { "7": "6", "10": "6", "100": "86", "1000": "886" }],
  ["polygenelubricants", { "7": "5", "10": "8", "100": "48", "1000": "48" }],
  ["GydZG_", { "7": "2", "10": "6", "100": "36", "1000": "236" }],
  ["DESIGNING WORKHOUSES", { "7": "2", "10": "0", "100": "60", "1000": "560" }],
  ["ü", { "7": "1", "10": "4", "100": "74", "1000": "274" }],
  ["日本語", { "7": "1", "10": "9", "100": "79", "1000": "879" }],
  ["😀", { "7": "4", "10": "6", "100": "46", "1000": "546" }],
  ["shard-99999", { "7": "2", "10": "4", "100": "44", "1000": "844" }],
  ["abcdefghijklmnopqrstuvwxyz0123456789", { "7": "0", "10": "8", "100": "78", "1000": "678" }],
]);

const shardCountsOf = (e: ExpectedIds) =>
  (Object.keys(e) as ShardCounts[]).map((k) => [Number(k), e[k]] as const);

describe("hashcode-extractor.json", () => {
  it("exercises all 45 cases of the file", () => {
    expect(file.cases).toHaveLength(45);
    expect(casesOfKind(file.cases, "hashCodeShardId")).toHaveLength(20);
    expect(casesOfKind(file.cases, "murmur2Hash")).toHaveLength(5);
    expect(casesOfKind(file.cases, "murmur2ShardId")).toHaveLength(20);
    expect(MURMUR3_DEFAULT_SHARD_IDS.size).toBe(20);
  });

  it.each(casesOfKind(file.cases, "hashCodeShardId").map((c) => [c.name, c] as const))(
    "%s",
    (_, c) => {
      const units = Array.from({ length: c.entityId.length }, (_, i) => c.entityId.charCodeAt(i));
      expect(units).toEqual(c.entityIdUtf16CodeUnits);
      expect(javaStringHashCode(c.entityId)).toBe(c.javaStringHashCode);
      const pinned = MURMUR3_DEFAULT_SHARD_IDS.get(c.entityId);
      expect(pinned, "pinned default ids").toBeDefined();
      for (const [n, expected] of shardCountsOf(c.expectedShardIdByNumberOfShards)) {
        // The Java-compatible option reproduces the vector, negative ids included.
        expect(hashCodeShardId(c.entityId, n), `n=${n}`).toBe(expected);
        expect(shardIdFunctions["java-hash-code"](c.entityId, n)).toBe(expected);
        // The default is murmur3: its own, documented, never-negative id.
        const byDefault = shardIdFunctions[DEFAULT_SHARD_ID_ALGORITHM](c.entityId, n);
        expect(byDefault).toBe(murmur3ShardId(c.entityId, n));
        expect(byDefault, `default n=${n}`).toBe(pinned?.[String(n) as ShardCounts]);
        expect(Number(byDefault)).toBeGreaterThanOrEqual(0);
        expect(Number(byDefault)).toBeLessThan(n);
        if (expected.startsWith("-")) expect(byDefault).not.toBe(expected);
      }
    },
  );

  it.each(casesOfKind(file.cases, "murmur2Hash").map((c) => [c.name, c] as const))("%s", (_, c) => {
    expect(murmur2(utf8Encode(c.input))).toBe(c.expectedMurmur2OfUtf8);
  });

  it.each(casesOfKind(file.cases, "murmur2ShardId").map((c) => [c.name, c] as const))(
    "%s",
    (_, c) => {
      expect(Array.from(utf8Encode(c.entityId))).toEqual(c.utf8Bytes);
      expect(murmur2(utf8Encode(c.entityId))).toBe(c.murmur2);
      for (const [n, expected] of shardCountsOf(c.expectedShardIdByNumberOfShards)) {
        expect(murmur2ShardId(c.entityId, n), `n=${n}`).toBe(expected);
        expect(shardIdFunctions.murmur2(c.entityId, n)).toBe(expected);
      }
    },
  );
});

describe("shard id functions (shardkit)", () => {
  it("the default algorithm is murmur3", () => {
    expect(DEFAULT_SHARD_ID_ALGORITHM).toBe("murmur3");
  });

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31])(
    "rejects numberOfShards = %s with a ConfigError",
    (n) => {
      for (const f of [murmur3ShardId, hashCodeShardId, murmur2ShardId])
        expect(() => f("x", n)).toThrow(
          expect.objectContaining({ code: "CONFIG_INVALID", key: "numberOfShards" }),
        );
    },
  );

  it("accepts the largest Java int as numberOfShards", () => {
    expect(hashCodeShardId("polygenelubricants", 2 ** 31 - 1)).toBe("-1");
    expect(Number(murmur3ShardId("polygenelubricants", 2 ** 31 - 1))).toBeGreaterThanOrEqual(0);
  });
});
