export { AsyncSchemaError, type Schema, type SchemaIssue } from "../base/schema.js";
export type { ShardAllocationStrategy } from "../cluster/sharding/async-strategy.js";
export type { ShardingLifecycleListener } from "../cluster/sharding/sharding-lifecycle.js";
export type {
  RebalanceClusterFacts,
  RegionMember,
  RegionView,
} from "../core/coordinator/allocation/region-view.js";
export {
  type CoordinatorAllocationStrategy,
  consistentHashingStrategy,
  leastShardStrategy,
  thresholdStrategy,
} from "../core/coordinator/coordinator-strategy.js";
export { MissingPeerDependencyError } from "../persistence/peer-dependency.js";
export {
  type EvolutionSpec,
  ManifestVersionError,
  UnknownManifestError,
  type Upcaster,
} from "../protocol/evolution.js";
export { ClusterNode, type ClusterNodeOptions } from "./cluster-node.js";
export {
  type ClassicShardingOptions,
  ClusterSharding,
  type ClusterShardingStats,
  type EntityCreationContext,
  type EntityLocation,
  type EntityRef,
  EntityTypeKey,
  type EntityTypeKeyOptions,
  type ShardedEntityOptions,
  type ShardHandOff,
  type ShardingStoreOptions,
  type ShardRegionState,
  type StateStoreMode,
} from "./cluster-sharding.js";
export {
  CodecMismatchError,
  MANIFEST_CODEC_SERIALIZER_ID,
  type ManifestCodecOptions,
  manifestCodec,
  msgpackCodec,
} from "./codecs.js";
export { MessageValidationError } from "./entity-schema.js";
export {
  type EntityId,
  envelopeExtractor,
  type HashCodeExtractorOptions,
  HashCodeMessageExtractor,
  isStartEntity,
  type MessageExtractor,
  type ShardId,
  type ShardIdAlgorithm,
  ShardingEnvelope,
  StartEntity,
} from "./message-extractor.js";
