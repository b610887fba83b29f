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
export { ClusterNode, type ClusterNodeOptions } from "./cluster-node.js";
export {
  type ClassicShardingOptions,
  ClusterSharding,
  type ClusterShardingStats,
  type EntityCreationContext,
  type EntityLocation,
  type EntityRef,
  EntityTypeKey,
  type ShardedEntityOptions,
  type ShardingStoreOptions,
  type ShardRegionState,
  type StateStoreMode,
} from "./cluster-sharding.js";
export { CodecMismatchError, msgpackCodec } from "./codecs.js";
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
