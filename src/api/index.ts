export { ClusterNode, type ClusterNodeOptions } from "./cluster-node.js";
export {
  ClusterSharding,
  type EntityCreationContext,
  type EntityRef,
  EntityTypeKey,
  type ShardedEntityOptions,
} from "./cluster-sharding.js";
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
