/**
 * shardkit: cluster sharding for Node.js. This entry point exports the public API that
 * exists so far: the actor core, settings, typed errors and the real runtime.
 * Subpaths: `shardkit/testing` (simulator and test helpers), `shardkit/node` (the real
 * runtime's ports), `shardkit/sim` (the deterministic simulator), `shardkit/sqlite` and
 * `shardkit/postgres` (the persistence plugins).
 */
export * from "./actor/index.js";
export * from "./api/index.js";
export type { Disposable } from "./base/disposable.js";
export { TransportError } from "./base/errors.js";
export {
  Cluster,
  type ClusterEventHandler,
  type ClusterOptions,
  type ClusterState,
} from "./cluster/membership/index.js";
export {
  RemoteActorRef,
  Remoting,
  type RemotingOptions,
  type RemotingSettings,
  type RemotingStats,
} from "./cluster/remoting/index.js";
export {
  type CoordinatorRecoveryData,
  type CoordinatorStore,
  JournalCoordinatorStore,
} from "./cluster/sharding/coordinator-store.js";
export {
  type JournalRememberEntitiesSettings,
  JournalRememberEntitiesStore,
} from "./cluster/sharding/journal-remember-entities-store.js";
export {
  coordinatorPersistenceId,
  rememberPersistenceId,
  SHARDING_PERSISTENCE_ID_PREFIX,
  ShardingStoreCorruptError,
} from "./cluster/sharding/sharding-store-codec.js";
export * from "./cluster/shutdown/index.js";
export {
  ClusterSingleton,
  type ClusterSingletonOptions,
  type SingletonHost,
  SingletonNameTakenError,
} from "./cluster/singleton/index.js";
export type { ConsistentHashingSettings } from "./core/coordinator/allocation/consistent-hashing.js";
export type { LeastShardSettings } from "./core/coordinator/allocation/least-shard.js";
export type {
  RebalanceClusterFacts,
  RegionMember,
  RegionView,
} from "./core/coordinator/allocation/region-view.js";
export type { ThresholdRebalanceSettings } from "./core/coordinator/allocation/threshold-rebalance.js";
export type { CoordinatorSettings } from "./core/coordinator/coordinator-settings.js";
export {
  type CoordinatorAllocationStrategy,
  consistentHashingStrategy,
  leastShardStrategy,
  thresholdStrategy,
} from "./core/coordinator/coordinator-strategy.js";
export type { SbrSettings } from "./core/downing/sbr-settings.js";
export type { ClusterEvent } from "./core/membership/cluster-events.js";
export type { ClusterSettings } from "./core/membership/cluster-settings.js";
export type { RegionSettings } from "./core/region/region-settings.js";
export type { ShardSettings } from "./core/shard/shard-settings.js";
export * from "./core/shutdown/index.js";
export * from "./management/index.js";
export { MemoryJournal, type MemoryJournalOptions } from "./persistence/memory/memory-journal.js";
export { MemoryLease, MemoryLeaseStore } from "./persistence/memory/memory-lease.js";
export { MemoryRememberEntitiesStore } from "./persistence/memory/memory-remember-entities-store.js";
export { MemorySnapshotStore } from "./persistence/memory/memory-snapshot-store.js";
export type { Clock, Logger, LogLevel, Random, Runtime, Scheduler } from "./ports/index.js";
export {
  type Journal,
  JournalConflictError,
  type JournalEvent,
  JournalRejectedError,
  type PersistedEvent,
  PersistenceStoreError,
} from "./ports/journal.js";
export type { Lease, LeaseProvider } from "./ports/lease.js";
export {
  InvalidRememberBatchError,
  type RememberEntitiesStore,
  type RememberEntitiesUpdate,
} from "./ports/remember-entities-store.js";
export type { SnapshotPayload, SnapshotStore, StoredSnapshot } from "./ports/snapshot-store.js";
export { createNodeRuntime, type NodeRuntimeOptions } from "./runtime/node/index.js";
