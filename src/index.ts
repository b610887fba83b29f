/**
 * shardkit: cluster sharding for Node.js. This entry point is the public API: what an
 * application needs to run actors, a cluster node, sharded entities and singletons,
 * persistence, and to handle shardkit's typed errors. Each name is exported once;
 * `test/api/api-surface.test.ts` snapshots the list, so a change here is a visible diff.
 *
 * Other entry points: `shardkit/internal` (the building blocks the facade is made of, no
 * compatibility promise), `shardkit/testing` (simulator and test helpers),
 * `shardkit/node` (the real runtime's ports), `shardkit/sim` (the deterministic
 * simulator), `shardkit/sqlite` and `shardkit/postgres` (the persistence plugins).
 * See docs/architecture.md, "Public API".
 */

// Actors
export { DeathPactError, NotAChildError } from "./actor/actor-cell.js";
export { ActorPath } from "./actor/actor-path.js";
export { type ActorRef, PoisonPill } from "./actor/actor-ref.js";
export { ActorSystem, type ActorSystemOptions } from "./actor/actor-system.js";
export { type AskOptions, AskRejectedError, ask } from "./actor/ask.js";
export {
  AbstractBehavior,
  type ActorContext,
  type ActorSystemStats,
  type ActorSystemView,
  type Behavior,
  type BehaviorResult,
  Behaviors,
  type HandlerResult,
  type MessageHandler,
  type SignalHandler,
  type StashBuffer,
  type TimerScheduler,
} from "./actor/behavior.js";
// Errors: every error shardkit throws is a ShardkitError with a stable `code`
export { InvalidEffectError } from "./actor/event-sourced/errors.js";
// Event sourcing
export {
  defaultEventSourcedBackoff,
  Effect,
  type EffectFactory,
  type EventCodec,
  EventSourcedBehavior,
  type EventSourcedOptions,
  EventSourcedPersistError,
  EventSourcedRecoveryError,
  EventValidationError,
  PERSISTENCE_ID_SEPARATOR,
  parsePersistenceId,
  persistenceIdOf,
  type SideEffect,
  type SnapshotCodec,
} from "./actor/event-sourced/index.js";
export type {
  ActorFailed,
  AnyEvent,
  DeadLetter,
  DeadLetterReason,
  EventOf,
  EventStream,
  SystemEvent,
  UnhandledMessage,
} from "./actor/event-stream.js";
// At-least-once delivery
export {
  type DeliverFn,
  type Delivery,
  OUTBOX_SNAPSHOT_AFTER_DEFAULT,
  Outbox,
  type OutboxAccepted,
  type OutboxCommand,
  type OutboxConfirm,
  type OutboxGetStatus,
  type OutboxOptions,
  type OutboxRejected,
  type OutboxSend,
  type OutboxSendReply,
  type OutboxStatus,
  type OutboxUnconfirmedWarning,
} from "./actor/outbox/outbox.js";
export {
  defaultOutboxSettings,
  type OutboxSettings,
  outboxSettings,
} from "./actor/outbox/outbox-settings.js";
export type { OutboxEntry, OutboxEvent, OutboxSnapshot } from "./actor/outbox/outbox-state.js";
export type { Props } from "./actor/props.js";
export { type ActorSettings, actorSettings, defaultActorSettings } from "./actor/settings.js";
export type { Signal } from "./actor/signals.js";
export { type BackoffOptions, SupervisorStrategy } from "./actor/supervision.js";
// Cluster node, sharding, singleton
export { ClusterNode, type ClusterNodeOptions } from "./api/cluster-node.js";
export {
  type ClusterProfile,
  ClusterProfiles,
  ShardLeaseProfiles,
} from "./api/cluster-profiles.js";
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
  type ShardingDDataOptions,
  type ShardingProxyOptions,
  type ShardingSettingsOptions,
  type ShardingStoreOptions,
  type ShardingTypeOptions,
  type ShardRegionState,
  type StateStoreMode,
} from "./api/cluster-sharding.js";
export {
  CodecMismatchError,
  MANIFEST_CODEC_SERIALIZER_ID,
  type ManifestCodecOptions,
  manifestCodec,
  msgpackCodec,
} from "./api/codecs.js";
export { MessageValidationError } from "./api/entity-schema.js";
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
} from "./api/message-extractor.js";
export type { DiscoveryOptions, ManagementOptions } from "./api/node-extensions.js";
export type { TracingOptions } from "./api/otel-tracing.js";
// Runtime ports and the real runtime
export type { Disposable } from "./base/disposable.js";
export {
  AbortError,
  AskTimeoutError,
  ConfigError,
  InvalidActorNameError,
  InvalidActorRefError,
  InvalidAddressError,
  ShardkitError,
  type ShardkitErrorCode,
  StashOverflowError,
  SystemTerminatedError,
  TransportError,
} from "./base/errors.js";
// Schemas and evolution (docs/evolution.md)
export { AsyncSchemaError, type Schema, type SchemaIssue } from "./base/schema.js";
export type { ClusterEventHandler, ClusterState } from "./cluster/membership/cluster.js";
// Settings
export type {
  ControlKindStats,
  RemotingSettings,
  RemotingStats,
} from "./cluster/remoting/index.js";
export { RemoteSendError } from "./cluster/remoting/remoting.js";
export type { ShardAllocationStrategy } from "./cluster/sharding/async-strategy.js";
export { ShardingTypeNotStartedError } from "./cluster/sharding/sharding-errors.js";
export type {
  HandOffAbandonCause,
  HandOffReason,
  PassivationReason,
  RegionProbe,
  ShardingLifecycleListener,
} from "./cluster/sharding/sharding-lifecycle.js";
export { ShardingStoreCorruptError } from "./cluster/sharding/sharding-store-codec.js";
// Coordinated shutdown
export {
  CoordinatedShutdown,
  type CoordinatedShutdownOptions,
  type ShutdownTask,
  type ShutdownTaskContext,
} from "./cluster/shutdown/coordinated-shutdown.js";
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
export {
  type ShutdownAbortCause,
  ShutdownAbortedError,
  ShutdownPhaseStartedError,
  UnknownShutdownPhaseError,
} from "./core/shutdown/shutdown-errors.js";
export type { PlannedPhase, ShutdownStatus } from "./core/shutdown/shutdown-machine.js";
export {
  BUILT_IN_PHASE_NAMES,
  type BuiltInShutdownPhase,
  DEFAULT_PHASE_TIMEOUT_MS,
  type PhaseDefinition,
  type PhaseSettings,
  ShutdownPhase,
} from "./core/shutdown/shutdown-phases.js";
export {
  isKnownShutdownReason,
  KNOWN_SHUTDOWN_REASONS,
  type KnownShutdownReason,
  type ShutdownReason,
} from "./core/shutdown/shutdown-reason.js";
export type {
  PhaseOverride,
  ShutdownSettings,
  ShutdownSettingsOverrides,
} from "./core/shutdown/shutdown-settings.js";
// Operations: the management HTTP server (loading it registers it with ClusterNode.start)
export type { DiscoverySettings } from "./management/discovery.js";
export type { CheckResult, ReadinessCheck } from "./management/health.js";
export {
  type Management,
  managementOf,
} from "./management/index.js";
export {
  MANAGEMENT_HOST_DEFAULT,
  MANAGEMENT_PORT_DEFAULT,
  type ManagementSettings,
} from "./management/settings.js";
// Observability: metrics registry, Prometheus text, OpenTelemetry bridge (docs/observability.md)
export {
  bridgeToOpenTelemetry,
  type Collector,
  DURATION_BUCKETS_SECONDS,
  HistogramSeries,
  instrumentJournal,
  type Labels,
  Metric,
  type MetricOptions,
  MetricsRegistry,
  type MetricType,
  metricsOf,
  type NodeMetrics,
  type OtelMeterLike,
  PROMETHEUS_CONTENT_TYPE,
  prometheusText,
  SIZE_BUCKETS,
  traceJournal,
  ValueSeries,
} from "./observability/index.js";
export { MemoryJournal, type MemoryJournalOptions } from "./persistence/memory/memory-journal.js";
export { MemoryLease, MemoryLeaseStore } from "./persistence/memory/memory-lease.js";
export { MemoryRememberEntitiesStore } from "./persistence/memory/memory-remember-entities-store.js";
export { MemorySnapshotStore } from "./persistence/memory/memory-snapshot-store.js";
// Persistence ports and the in-memory plugins
export { MissingPeerDependencyError } from "./persistence/peer-dependency.js";
export type { Clock, Logger, LogLevel, Random, Runtime, Scheduler } from "./ports/index.js";
export type { Journal, JournalEvent, PersistedEvent, WriteFence } from "./ports/journal.js";
export {
  FencedWriteError,
  JournalConflictError,
  JournalRejectedError,
  PersistenceStoreError,
} from "./ports/journal.js";
export type { Lease, LeaseProvider, LeaseStore } from "./ports/lease.js";
export { LeaseLostError, LeaseUnavailableError } from "./ports/lease.js";
export type {
  RememberEntitiesStore,
  RememberEntitiesUpdate,
} from "./ports/remember-entities-store.js";
export { InvalidRememberBatchError } from "./ports/remember-entities-store.js";
export type { SnapshotPayload, SnapshotStore, StoredSnapshot } from "./ports/snapshot-store.js";
export { SnapshotTooLargeError } from "./ports/snapshot-store.js";
export { SerializationError, UnknownSerializerError } from "./protocol/errors.js";
export {
  type EvolutionSpec,
  ManifestCorruptError,
  ManifestMissingError,
  ManifestVersionError,
  UnknownManifestError,
  type Upcaster,
} from "./protocol/evolution.js";
export {
  MANIFEST_BYTES_MAX,
  type ManifestSerializer,
  type ManifestSerializerOptions,
  type ManifestType,
  manifestSerializer,
} from "./protocol/manifest-serializer.js";
export { createNodeRuntime, type NodeRuntimeOptions } from "./runtime/node/index.js";
