export { ClusterNode, type ClusterNodeOptions } from "./cluster-node.js";
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
