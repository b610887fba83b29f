/**
 * Message extractors: how sharding finds the entity id, the shard id and the message
 * the entity receives. `HashCodeMessageExtractor` derives the shard id from the entity
 * id with a stable hash:
 *
 * - "murmur3" (default): MurmurHash3 x86_32 (seed 0) of the UTF-8 entity id, taken as an
 *   unsigned 32-bit number, modulo numberOfShards. Stable across processes, platforms and
 *   versions; never negative.
 * - "java-hash-code": Java `String.hashCode` as Akka/Pekko's HashCodeMessageExtractor uses
 *   it (`abs(h) % n`, which is negative for the three ids whose hash is Integer.MIN_VALUE)
 *   — for clusters migrating from Akka/Pekko that must keep their shard ids.
 * - "murmur2": Kafka's default partitioner (`(murmur2(utf8) & 0x7fffffff) % n`) — to share
 *   shard ids with Kafka partitions.
 *
 * The reference vectors prove all three (test/conformance/hashcode-extractor.test.ts).
 * Every extractor also handles `StartEntity(entityId)`, which starts an entity without a
 * user message (used by remember-entities).
 */
import { ConfigError } from "../base/errors.js";
import {
  DEFAULT_SHARD_ID_ALGORITHM,
  type EntityId,
  type ShardId,
  type ShardIdAlgorithm,
  shardIdFunctions,
  validateNumberOfShards,
} from "../core/sharding/shard-id.js";

import { isStartEntity, StartEntity } from "../protocol/sharding.js";

export type { EntityId, ShardId, ShardIdAlgorithm };
export { isStartEntity, StartEntity };

/** A message addressed to an entity by id, for entities whose messages carry no id. */
export interface ShardingEnvelope<M> {
  readonly entityId: EntityId;
  readonly message: M;
}

export function ShardingEnvelope<M>(entityId: EntityId, message: M): ShardingEnvelope<M> {
  return { entityId, message };
}

/** Extracts routing information from messages of type `In` for entities taking `M`. */
export interface MessageExtractor<In, M> {
  /** The entity the message is for. */
  entityId(message: In | StartEntity): EntityId;
  /** The shard of that entity; must be a pure function of the entity id. */
  shardId(message: In | StartEntity): ShardId;
  /** What the entity receives. */
  entityMessage(message: In): M;
}

export interface HashCodeExtractorOptions<In, M> {
  /** The entity id of a message. */
  readonly entityId: (message: In) => EntityId;
  /** What the entity receives (default: the message itself). */
  readonly entityMessage?: (message: In) => M;
  /** Hash of entity id -> shard id. Default "murmur3". */
  readonly algorithm?: ShardIdAlgorithm;
}

/** Shard id = hash(entity id) mod numberOfShards; see the module comment for algorithms. */
export class HashCodeMessageExtractor<In, M = In> implements MessageExtractor<In, M> {
  readonly algorithm: ShardIdAlgorithm;
  private readonly hash: (entityId: EntityId, numberOfShards: number) => ShardId;

  constructor(
    readonly numberOfShards: number,
    private readonly options: HashCodeExtractorOptions<In, M>,
  ) {
    validateNumberOfShards(numberOfShards);
    const algorithm = options.algorithm ?? DEFAULT_SHARD_ID_ALGORITHM;
    if (!Object.hasOwn(shardIdFunctions, algorithm))
      throw new ConfigError(
        "algorithm",
        algorithm,
        `one of ${Object.keys(shardIdFunctions).join(", ")}`,
      );
    this.algorithm = algorithm;
    this.hash = shardIdFunctions[algorithm];
  }

  entityId(message: In | StartEntity): EntityId {
    return isStartEntity(message) ? message.entityId : this.options.entityId(message as In);
  }

  shardId(message: In | StartEntity): ShardId {
    return this.shardIdOf(this.entityId(message));
  }

  /** The shard of an entity id. */
  shardIdOf(entityId: EntityId): ShardId {
    return this.hash(entityId, this.numberOfShards);
  }

  entityMessage(message: In): M {
    const f = this.options.entityMessage;
    return f === undefined ? (message as unknown as M) : f(message);
  }
}

/** The extractor for `ShardingEnvelope<M>` messages. */
export function envelopeExtractor<M>(
  numberOfShards: number,
  algorithm: ShardIdAlgorithm = DEFAULT_SHARD_ID_ALGORITHM,
): HashCodeMessageExtractor<ShardingEnvelope<M>, M> {
  return new HashCodeMessageExtractor<ShardingEnvelope<M>, M>(numberOfShards, {
    entityId: (e) => e.entityId,
    entityMessage: (e) => e.message,
    algorithm,
  });
}
