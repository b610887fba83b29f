/** Distributed Data replicator (cluster layer); see docs/distributed-data.md. */
export {
  ddataKey,
  type Key,
  type OperationOptions,
  Replicator,
  type ReplicatorHost,
  type ReplicatorOptions,
  ReplicatorStoppedError,
} from "./replicator.js";
