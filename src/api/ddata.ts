/**
 * `shardkit/ddata`: Distributed Data — CRDT values replicated between cluster members
 * (docs/distributed-data.md).
 *
 * ```ts
 * const replicator = Replicator.start(node); // node: a ClusterNode
 * const visits = ddataKey<PNCounter>("visits");
 * await replicator.update(visits, PNCounter.empty, (c) => c.increment(replicator.selfNode), MAJORITY);
 * const value = (await replicator.get(visits, MAJORITY))?.value;
 * ```
 */
export {
  ddataKey,
  type Key,
  type OperationOptions,
  Replicator,
  type ReplicatorHost,
  type ReplicatorOptions,
  ReplicatorStoppedError,
} from "../cluster/ddata/index.js";
export {
  CausalContext,
  createDDataSerializer,
  DDATA_SERIALIZER_ID,
  DDataDecodeError,
  type DDataElement,
  type DDataKind,
  DDataTypeMismatchError,
  decodeReplicatedData,
  encodeReplicatedData,
  Flag,
  GCounter,
  GSet,
  InvalidDDataOperationError,
  isReplicatedData,
  LWW_LOGICAL_CLOCK,
  LWWMap,
  LWWRegister,
  type LwwClock,
  lwwWallClock,
  ORMap,
  ORMultiMap,
  ORSet,
  PNCounter,
  PNCounterMap,
  ReplicatedData,
} from "../core/ddata/index.js";
export {
  ALL,
  type Consistency,
  consistencyFrom,
  DataDeletedError,
  DEFAULT_REPLICATOR_SETTINGS,
  GetFailureError,
  LOCAL,
  MAJORITY,
  ModifyFailureError,
  majority,
  type ReplicatorSettings,
  TooManyKeysError,
  UpdateTimeoutError,
} from "../core/ddata/replicator-types.js";
export {
  type DDataDurableStore,
  type DurableEntry,
  DurableStoreError,
  MemoryDDataDurableStore,
} from "../ports/ddata-durable-store.js";
