export {
  Cluster,
  type ClusterEventHandler,
  type ClusterOptions,
  type ClusterState,
} from "./cluster.js";
export { gossipFromWire, gossipToWire, InvalidGossipError } from "./gossip-codec.js";
