/**
 * Entity id -> shard id functions (the "message extractor" hash). Every node must map the
 * same entity id to the same shard id forever, so each function here is a frozen
 * contract: changing one re-homes every entity of every existing deployment.
 *
 * - `murmur3ShardId` is shardkit's DEFAULT: MurmurHash3 x86_32 (seed 0) of the UTF-8 id,
 *   taken as an unsigned 32-bit value, modulo the number of shards. Always in
 *   [0, numberOfShards).
 * - `hashCodeShardId` reproduces Akka/Pekko `HashCodeMessageExtractor` bit for bit,
 *   including its quirk: `abs(Integer.MIN_VALUE)` stays negative, so a few ids (e.g.
 *   "polygenelubricants") get a NEGATIVE shard id such as "-8". Use it only to share
 *   shard ids with a JVM deployment.
 * - `murmur2ShardId` matches Pekko's `Murmur2MessageExtractor` and Kafka's default
 *   partitioner, so shard n can line up with Kafka partition n.
 *
 * The default deliberately differs from Pekko's `HashCodeMessageExtractor`: Java's
 * String.hashCode clusters badly for short, similar ids and has the negative-id quirk.
 */
import { ConfigError } from "../../base/errors.js";
import { javaStringHashCode, murmur2, murmur3OfString, utf8Encode } from "../../base/hash.js";

/** Identifies an entity within its entity type. */
export type EntityId = string;

/** Identifies a shard (a group of entities that move together) within its entity type. */
export type ShardId = string;

/** Largest accepted number of shards: Java int range, so JVM-compatible modes agree. */
export const NUMBER_OF_SHARDS_MAX = 2_147_483_647;

/** Throws ConfigError unless `numberOfShards` is an integer in [1, NUMBER_OF_SHARDS_MAX]. */
export function validateNumberOfShards(numberOfShards: number): void {
  if (
    !Number.isInteger(numberOfShards) ||
    numberOfShards < 1 ||
    numberOfShards > NUMBER_OF_SHARDS_MAX
  )
    throw new ConfigError(
      "numberOfShards",
      numberOfShards,
      `an integer in [1, ${NUMBER_OF_SHARDS_MAX}]`,
    );
}

/** Java's 32-bit `Math.abs`: `abs32(-2^31)` overflows and stays `-2^31`. */
function abs32(h: number): number {
  return h < 0 ? -h | 0 : h;
}

/**
 * shardkit's default: `murmur3_32(utf8(entityId), seed 0)` as an unsigned 32-bit value,
 * modulo `numberOfShards`, as a decimal string. Never negative.
 */
export function murmur3ShardId(entityId: EntityId, numberOfShards: number): ShardId {
  validateNumberOfShards(numberOfShards);
  return String(murmur3OfString(entityId) % numberOfShards);
}

/**
 * Akka/Pekko `HashCodeMessageExtractor.shardId`: `abs32(javaHashCode(id)) % n` with a
 * truncating remainder, as a decimal string. Ids whose hash is `Integer.MIN_VALUE` yield
 * a negative shard id, exactly as on the JVM.
 */
export function hashCodeShardId(entityId: EntityId, numberOfShards: number): ShardId {
  validateNumberOfShards(numberOfShards);
  return String(abs32(javaStringHashCode(entityId)) % numberOfShards);
}

/**
 * Pekko `Murmur2MessageExtractor` / Kafka default partitioner:
 * `(murmur2(utf8(id)) & 0x7fffffff) % n`, as a decimal string. Never negative.
 */
export function murmur2ShardId(entityId: EntityId, numberOfShards: number): ShardId {
  validateNumberOfShards(numberOfShards);
  return String((murmur2(utf8Encode(entityId)) & 0x7fffffff) % numberOfShards);
}

/** Names of the built-in entity id -> shard id functions. */
export type ShardIdAlgorithm = "murmur3" | "java-hash-code" | "murmur2";

/** The built-in shard id functions by name; "murmur3" is the default. */
export const shardIdFunctions: Readonly<
  Record<ShardIdAlgorithm, (entityId: EntityId, numberOfShards: number) => ShardId>
> = Object.freeze({
  murmur3: murmur3ShardId,
  "java-hash-code": hashCodeShardId,
  murmur2: murmur2ShardId,
});

/** The default shard id algorithm. */
export const DEFAULT_SHARD_ID_ALGORITHM: ShardIdAlgorithm = "murmur3";
