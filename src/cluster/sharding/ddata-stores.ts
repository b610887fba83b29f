/**
 * stateStoreMode "ddata" (docs/sharding.md, "State stores"): the coordinator's state and
 * the remembered entities live in Distributed Data (docs/distributed-data.md), replicated
 * member to member, with no database.
 *
 * - The coordinator state is one LWWRegister holding the whole CoordinatorSnapshot, under
 *   `sharding/<type>/coordinator`. A batch of events is applied to the last written state
 *   and the result written with `majority` consistency before the coordinator announces
 *   anything (persist before announce, as with a journal); a new coordinator reads it with
 *   `majority`. A majority write followed by a majority read always meets at least one
 *   replica that holds the write, so the new coordinator sees every announced allocation.
 * - The remembered entities of a shard are one ORSet of entity ids under
 *   `sharding/<type>/shard/<shardId>`, updated and read with `majority`.
 *
 * With durable keys (the default when rememberEntities is on) both are also written to
 * each member's local DDataDurableStore, so that remembered entities and allocations
 * survive a full cluster restart *of the same members' disks* (see docs/sharding.md for the
 * trade-off on machines without persistent volumes).
 *
 * Two coordinators on two sides of a split brain would both write the register: the
 * later timestamp (then the greater node) wins when the sides merge. The split brain
 * resolver keeps one side, so the loser's writes are of a side that was downed.
 */
import { ConfigError } from "../../base/errors.js";
import { CoordinatorState } from "../../core/coordinator/coordinator-state.js";
import { ORSet } from "../../core/ddata/orset.js";
import {
  type Consistency,
  majority,
  type ReplicatorSettings,
} from "../../core/ddata/replicator-types.js";
import { LWWRegister } from "../../core/ddata/simple.js";
import type { DDataDurableStore } from "../../ports/ddata-durable-store.js";
import type {
  RememberEntitiesStore,
  RememberEntitiesUpdate,
} from "../../ports/remember-entities-store.js";
import { assertRememberBatch } from "../../ports/remember-entities-store.js";
import type { CoordinatorEvent, CoordinatorSnapshot } from "../../protocol/sharding.js";
import { ddataKey, type Key, Replicator, type ReplicatorHost } from "../ddata/replicator.js";
import {
  type CoordinatorRecoveryData,
  type CoordinatorStore,
  isCoordinatorSnapshot,
} from "./coordinator-store.js";
import { ShardingStoreCorruptError } from "./sharding-store-codec.js";

/** Options of stateStoreMode "ddata" (`ddata` on the entity type's options). */
export interface ShardingDDataOptions {
  /**
   * Keep the coordinator state and the remembered entities on this member's disk too, so
   * they survive a full cluster restart. Default: true when rememberEntities is on, else
   * false. Needs `durableStore`.
   */
  readonly durableKeys?: boolean;
  /** Where durable keys live (e.g. `new SqliteDDataStore({ path })` from shardkit/sqlite). */
  readonly durableStore?: DDataDurableStore;
  /** Reads and writes reach at least this many replicas even in a small cluster (default 0). */
  readonly majorityMinCap?: number;
  /** Timeout of one majority read or write, ms (default 5 000). A failure is retried. */
  readonly majorityTimeoutMs?: number;
  /** Settings of the type's replicator (gossip interval, delta propagation, ...). */
  readonly replicator?: Partial<ReplicatorSettings>;
}

/** ShardingDDataOptions, checked and with defaults. */
export interface ResolvedShardingDData {
  readonly durableStore: DDataDurableStore | undefined;
  readonly consistency: Consistency;
  readonly majorityTimeoutMs: number;
  readonly replicator: Partial<ReplicatorSettings> | undefined;
}

export const DEFAULT_DDATA_MAJORITY_TIMEOUT_MS = 5_000;

/**
 * Checks the ddata options of a type.
 * @throws ConfigError naming the key (durable keys without a store, a bad number).
 */
export function resolveShardingDData(
  o: ShardingDDataOptions | undefined,
  rememberEntities: boolean,
): ResolvedShardingDData {
  if (o !== undefined && (typeof o !== "object" || o === null))
    throw new ConfigError("ddata", o, "an object of ddata options");
  const durableKeys = o?.durableKeys ?? rememberEntities;
  if (typeof durableKeys !== "boolean")
    throw new ConfigError("ddata.durableKeys", durableKeys, "a boolean");
  const store = o?.durableStore;
  if (durableKeys && store === undefined)
    throw new ConfigError(
      "ddata.durableStore",
      undefined,
      "a DDataDurableStore (e.g. new SqliteDDataStore({ path }) from shardkit/sqlite) on this " +
        "member's disk; or ddata.durableKeys: false (remembered entities and allocations then " +
        "do not survive a full cluster restart)",
    );
  if (store !== undefined && typeof store.loadAll !== "function")
    throw new ConfigError("ddata.durableStore", store, "a DDataDurableStore");
  const minCap = o?.majorityMinCap ?? 0;
  if (!Number.isInteger(minCap) || minCap < 0)
    throw new ConfigError("ddata.majorityMinCap", minCap, "an integer >= 0");
  const timeoutMs = o?.majorityTimeoutMs ?? DEFAULT_DDATA_MAJORITY_TIMEOUT_MS;
  if (!(timeoutMs > 0) || !Number.isFinite(timeoutMs))
    throw new ConfigError("ddata.majorityTimeoutMs", timeoutMs, "a duration in ms > 0");
  return {
    durableStore: durableKeys ? store : undefined,
    consistency: majority(minCap),
    majorityTimeoutMs: timeoutMs,
    replicator: o?.replicator,
  };
}

/** The key prefix of a type's sharding data. */
export function shardingDDataPrefix(typeName: string): string {
  return `sharding/${typeName}/`;
}

/**
 * Which of a type's data a replicator holds: all of it (the usual case), or — when the
 * coordinator runs on another role than the entities — the shards' sets on the type's
 * role and the coordinator's register on the coordinator's role.
 */
export type ShardingReplicatorPart = "all" | "shards" | "coordinator";

/**
 * Starts a replicator of one entity type (`/system/sharding-ddata-<type>`, or
 * `...-coordinator` for the coordinator's own), replicating among the members with `role`.
 * Every member with the role starts it.
 */
export function startShardingReplicator(
  host: ReplicatorHost,
  typeName: string,
  role: string | undefined,
  o: ResolvedShardingDData,
  part: ShardingReplicatorPart,
): Replicator {
  const durable = o.durableStore;
  const prefix = shardingDDataPrefix(typeName);
  // One store may serve both replicators of a type: each keeps (and loads) only its keys.
  const keys = {
    all: [`${prefix}*`],
    shards: [`${prefix}shard/*`],
    coordinator: [`${prefix}coordinator`],
  }[part];
  return Replicator.start(host, {
    name: `sharding-ddata-${typeName}${part === "coordinator" ? "-coordinator" : ""}`,
    ...(role === undefined ? {} : { role }),
    ...(o.replicator === undefined ? {} : { settings: o.replicator }),
    ...(durable === undefined ? {} : { durableKeys: keys, durableStore: durable }),
  });
}

const EMPTY_SNAPSHOT: CoordinatorSnapshot = Object.freeze({
  regions: [],
  proxies: [],
  unallocatedShards: [],
});

/** The coordinator's state in an LWWRegister (see the module comment). */
export class DDataCoordinatorStore implements CoordinatorStore {
  private readonly key: Key<LWWRegister<CoordinatorSnapshot>>;
  /** The state as last written (or loaded): the base every batch applies to. */
  private state: CoordinatorState | undefined;

  constructor(
    private readonly replicator: Replicator,
    private readonly typeName: string,
    private readonly rememberEntities: boolean,
    private readonly o: ResolvedShardingDData,
  ) {
    this.key = ddataKey(`${shardingDDataPrefix(typeName)}coordinator`);
  }

  async load(): Promise<CoordinatorRecoveryData> {
    const reg = await this.replicator.get(this.key, this.o.consistency, {
      timeoutMs: this.o.majorityTimeoutMs,
    });
    const value: unknown = reg?.value;
    if (value !== undefined && !isCoordinatorSnapshot(value))
      throw new ShardingStoreCorruptError(
        this.key.id,
        0,
        "the coordinator state in distributed data is not a coordinator snapshot",
      );
    this.state = CoordinatorState.fromSnapshot(value ?? EMPTY_SNAPSHOT, this.rememberEntities);
    return value === undefined ? { events: [] } : { snapshot: value, events: [] };
  }

  async persist(events: readonly CoordinatorEvent[]): Promise<void> {
    const base = this.state ?? new CoordinatorState(this.rememberEntities);
    const next = base.clone();
    for (const e of events) next.apply(e);
    const snapshot = next.toSnapshot();
    const self = this.replicator.selfNode;
    await this.replicator.update(
      this.key,
      LWWRegister.create(self, EMPTY_SNAPSHOT),
      (r) => r.set(self, snapshot),
      this.o.consistency,
      { timeoutMs: this.o.majorityTimeoutMs },
    );
    // Only a written state is the base of the next batch: a failed batch is retried whole.
    this.state = next;
  }

  /** The register always holds the whole state: nothing to compact. */
  async saveSnapshot(_snapshot: CoordinatorSnapshot): Promise<void> {}

  toString(): string {
    return `DDataCoordinatorStore(${this.typeName})`;
  }
}

/** Remembered entities per shard in ORSets (see the module comment). */
export class DDataRememberEntitiesStore implements RememberEntitiesStore {
  constructor(
    private readonly replicator: Replicator,
    private readonly o: ResolvedShardingDData,
  ) {}

  private keyOf(typeName: string, shardId: string): Key<ORSet<string>> {
    return ddataKey(`${shardingDDataPrefix(typeName)}shard/${shardId}`);
  }

  async getEntities(typeName: string, shardId: string): Promise<readonly string[]> {
    const set = await this.replicator.get(this.keyOf(typeName, shardId), this.o.consistency, {
      timeoutMs: this.o.majorityTimeoutMs,
    });
    return set === undefined ? [] : [...set.elements].sort();
  }

  async update(typeName: string, shardId: string, batch: RememberEntitiesUpdate): Promise<void> {
    assertRememberBatch(batch);
    if (batch.started.length === 0 && batch.stopped.length === 0) return;
    const self = this.replicator.selfNode;
    await this.replicator.update(
      this.keyOf(typeName, shardId),
      ORSet.empty<string>(),
      (s) => {
        let next = s;
        for (const id of batch.started) next = next.add(self, id);
        for (const id of batch.stopped) next = next.remove(self, id);
        return next;
      },
      this.o.consistency,
      { timeoutMs: this.o.majorityTimeoutMs },
    );
  }
}
