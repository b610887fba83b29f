/**
 * The public extractors reproduce the reference vectors through their named algorithms
 * (java-hash-code: Akka/Pekko HashCodeMessageExtractor; murmur2: Kafka) and use
 * murmur3 by default; StartEntity and ShardingEnvelope are routed by their entity id.
 */
import { describe, expect, it } from "vitest";
import {
  envelopeExtractor,
  HashCodeMessageExtractor,
  ShardingEnvelope,
  StartEntity,
} from "../../src/api/index.js";
import { ConfigError } from "../../src/base/errors.js";
import { murmur3ShardId } from "../../src/core/sharding/shard-id.js";
import { casesOfKind, loadVectors } from "../conformance/vectors.js";

type Ids = Readonly<Record<string, string>>;
type Case =
  | {
      name: string;
      kind: "hashCodeShardId";
      entityId: string;
      expectedShardIdByNumberOfShards: Ids;
    }
  | { name: string; kind: "murmur2ShardId"; entityId: string; expectedShardIdByNumberOfShards: Ids }
  | { name: string; kind: "murmur2Hash" };

const file = loadVectors<Case>("hashcode-extractor.json");
type Msg = { account: string; amount: number };

describe("HashCodeMessageExtractor", () => {
  it("java-hash-code reproduces every Akka/Pekko shard id (negative ones included)", () => {
    const cases = casesOfKind(file.cases, "hashCodeShardId");
    expect(cases).toHaveLength(20);
    for (const c of cases)
      for (const [n, expected] of Object.entries(c.expectedShardIdByNumberOfShards)) {
        const x = new HashCodeMessageExtractor<Msg>(Number(n), {
          entityId: (m) => m.account,
          algorithm: "java-hash-code",
        });
        expect(x.shardId({ account: c.entityId, amount: 1 }), `${c.name} n=${n}`).toBe(expected);
        expect(x.shardId(StartEntity(c.entityId))).toBe(expected);
      }
  });

  it("murmur2 reproduces every Kafka partition", () => {
    const cases = casesOfKind(file.cases, "murmur2ShardId");
    expect(cases).toHaveLength(20);
    for (const c of cases)
      for (const [n, expected] of Object.entries(c.expectedShardIdByNumberOfShards)) {
        const x = envelopeExtractor<string>(Number(n), "murmur2");
        expect(x.shardId(ShardingEnvelope(c.entityId, "hi")), `${c.name} n=${n}`).toBe(expected);
      }
  });

  it("defaults to murmur3 and passes the message through", () => {
    const x = new HashCodeMessageExtractor<Msg>(100, { entityId: (m) => m.account });
    expect(x.algorithm).toBe("murmur3");
    const m = { account: "acc-7", amount: 3 };
    expect(x.entityId(m)).toBe("acc-7");
    expect(x.shardId(m)).toBe(murmur3ShardId("acc-7", 100));
    expect(x.entityMessage(m)).toBe(m);
    expect(x.entityId(StartEntity("acc-9"))).toBe("acc-9");
  });

  it("envelopes unwrap to their message", () => {
    const x = envelopeExtractor<{ op: string }>(10);
    const e = ShardingEnvelope("cart-1", { op: "add" });
    expect(x.entityId(e)).toBe("cart-1");
    expect(x.entityMessage(e)).toEqual({ op: "add" });
  });

  it("rejects bad settings with ConfigError", () => {
    expect(() => new HashCodeMessageExtractor<Msg>(0, { entityId: (m) => m.account })).toThrow(
      ConfigError,
    );
    expect(
      () =>
        new HashCodeMessageExtractor<Msg>(10, {
          entityId: (m) => m.account,
          algorithm: "crc32" as never,
        }),
    ).toThrow(ConfigError);
  });
});
