/**
 * The assembly of one sharded entity type on one node: `resolveShardingTypeSpec` turns a
 * type's options into one resolved `ShardingTypeSpec` (every setting resolved and
 * validated once, the stores chosen, the removal margin derived from the membership
 * settings), and `startShardingType` starts what the spec describes: the coordinator
 * singleton (or only its proxy), the region, and the shutdown hooks. The user-facing API
 * (api/cluster-sharding.ts) only builds the options and keeps the handles.
 */
import type { ActorPath } from "../../actor/actor-path.js";
import type { ActorRef } from "../../actor/actor-ref.js";
import { ask } from "../../actor/ask.js";
import type { Behavior } from "../../actor/behavior.js";
import { ConfigError } from "../../base/errors.js";
import {
  type CoordinatorSettings,
  resolveCoordinatorSettings,
} from "../../core/coordinator/coordinator-settings.js";
import { leastShardStrategy } from "../../core/coordinator/coordinator-strategy.js";
import { downAllWhenUnstableMsOf } from "../../core/downing/sbr-settings.js";
import { uniqueAddressToString } from "../../core/membership/unique-address.js";
import { type RegionSettings, resolveRegionSettings } from "../../core/region/region-settings.js";
import {
  resolveShardLeaseSettings,
  type ShardLeaseSettings,
} from "../../core/shard/shard-lease-machine.js";
import { resolveShardSettings, type ShardSettings } from "../../core/shard/shard-settings.js";
import {
  DEFAULT_SHARD_ID_ALGORITHM,
  type ShardIdAlgorithm,
  shardIdFunctions,
  validateNumberOfShards,
} from "../../core/sharding/shard-id.js";
import type { Journal } from "../../ports/journal.js";
import type { LeaseStore } from "../../ports/lease.js";
import type { RememberEntitiesStore } from "../../ports/remember-entities-store.js";
import type { SnapshotStore } from "../../ports/snapshot-store.js";
import type { Tracing } from "../../ports/tracing.js";
import {
  EntityEnvelope,
  isStartEntity,
  type RegionControl,
  type ShardingMsg,
} from "../../protocol/sharding.js";
import type { Cluster } from "../membership/cluster.js";
import { ClusterSingleton, type SingletonHost } from "../singleton/cluster-singleton.js";
import type { ShardAllocationStrategy } from "./async-strategy.js";
import { coordinatorBehavior } from "./coordinator-actor.js";
import { CoordinatorLease, coordinatorLeaseName } from "./coordinator-lease.js";
import { type CoordinatorStore, JournalCoordinatorStore } from "./coordinator-store.js";
import {
  DDataCoordinatorStore,
  DDataRememberEntitiesStore,
  type ResolvedShardingDData,
  resolveShardingDData,
  type ShardingDDataOptions,
  startShardingReplicator,
} from "./ddata-stores.js";
import { JournalRememberEntitiesStore } from "./journal-remember-entities-store.js";
import { regionBehavior } from "./region-actor.js";
import { RemovalTimes } from "./removal-times.js";
import type { EntityContext } from "./shard-actor.js";
import { bindShardLifecycle, type ShardingLifecycleListener } from "./sharding-lifecycle.js";

// ---- options (what a user gives, the same for every API style) ----------------------------

/** Where the coordinator keeps its state (see docs/sharding.md, "State stores"). */
export type StateStoreMode = "regions" | "persistence" | "ddata";

/** Durable sharding state: the coordinator's allocations and remembered entities. */
export interface ShardingStoreOptions {
  /**
   * Journal (and optional snapshot store) for sharding's own data: coordinator state and
   * remembered entities. May be a different store from the one the entities persist to.
   */
  readonly persistence?: { readonly journal: Journal; readonly snapshots?: SnapshotStore };
  /**
   * "regions": a new coordinator rebuilds the allocations from what the regions report
   * (no store; allocations do not survive a full cluster restart). "persistence": every
   * allocation is written to `persistence.journal` before it is announced. "ddata": the
   * allocations and the remembered entities are replicated member to member in
   * Distributed Data, written and read with `majority` (no database; see `ddata`).
   * Default: "persistence" when `persistence` is given, else "regions".
   */
  readonly stateStoreMode?: StateStoreMode;
  /** Options of stateStoreMode "ddata" (durable keys, majority timeout, replicator settings). */
  readonly ddata?: ShardingDDataOptions;
  /**
   * Restart this type's entities after a rebalance, a crash, a coordinator fail-over and
   * a full restart, without waiting for a message (default false). Needs
   * `rememberEntitiesStore` or `persistence`. Automatic passivation is off meanwhile.
   * The one place to set it (the coordinator and shard settings take it from here).
   */
  readonly rememberEntities?: boolean;
  /** Where remembered entity ids are kept. Default: a journal store on `persistence`. */
  readonly rememberEntitiesStore?: RememberEntitiesStore;
}

/**
 * Shard leases with fencing tokens (docs/sharding.md, "Leases and fencing"): every shard
 * holds the lease `<type>/<shardId>` while it runs entities, and its writes carry the
 * lease's token. The timing settings default to DEFAULT_SHARD_LEASE_SETTINGS.
 */
export interface ShardLeaseOption extends Partial<ShardLeaseSettings> {
  /** The lease store: `sqlitePersistence(...).leases`, a PostgresLeaseStore, a MemoryLeaseStore. */
  readonly provider: LeaseStore;
  /**
   * Journals whose fence a shard advances to its new token before it starts an entity
   * (so even an entity that never writes again fences its stale copy out). Default: the
   * type's `persistence.journal`, when given. Add the journal your entities write to if
   * it is another one.
   */
  readonly journals?: readonly Journal[];
}

/** Settings of a type's coordinator, regions and shards (rememberEntities: the option). */
export interface ShardingSettingsOptions {
  readonly coordinator?: Partial<Omit<CoordinatorSettings, "rememberEntities" | "shardsLeased">>;
  readonly region?: Partial<RegionSettings>;
  readonly shard?: Partial<Omit<ShardSettings, "rememberEntities">>;
}

/** What every style of starting a type accepts (`init`, the classic `start`). */
export interface ShardingTypeOptions<M> extends ShardingStoreOptions {
  /** Host entities only on members with this role (others get a proxy region). */
  readonly role?: string;
  /**
   * Run the coordinator singleton on the oldest member with this role instead of `role`
   * (default: `role`). Must be the same on every node that starts the type.
   */
  readonly coordinatorRole?: string;
  /** Sent to each entity when its shard is handed off (default: stop). */
  readonly handOffStopMessage?: M;
  /** Default: least-shard allocation. */
  readonly allocationStrategy?: ShardAllocationStrategy;
  /** Told when this node's shards and entities start and stop (see ShardingOracle in shardkit/testing). */
  readonly lifecycle?: ShardingLifecycleListener;
  readonly settings?: ShardingSettingsOptions;
  /**
   * Shard leases (default: the node's `shardLeases` setting, else off). With leases, the
   * coordinator re-allocates a downed member's shards without the removal margin: the
   * new home cannot start them before their lease expired.
   */
  readonly lease?: ShardLeaseOption;
  /**
   * false: no spans for this type's messages even when the node traces
   * (ClusterNodeOptions.tracing; docs/observability.md, "Tracing"). Default true.
   */
  readonly tracing?: boolean;
}

/** How a type finds the shard and entity of a message. */
export interface ShardingRouting {
  /** The envelope of a message sent to the region (undefined: not a message of this type). */
  readonly route: (message: unknown) => EntityEnvelope | undefined;
  /** The shard of an entity id (a pure function of it). */
  readonly shardOf: (entityId: string) => string;
  /**
   * `route` of a `{ entityId, message }` envelope gives exactly `shardOf(entityId)` and
   * its message: EntityRefs may then send EntityEnvelopes with the shard id computed once.
   */
  readonly preRouted: boolean;
}

/** What `resolveShardingTypeSpec` needs besides the options. */
export interface ShardingTypeInput extends ShardingTypeOptions<unknown> {
  readonly typeName: string;
  readonly routing: ShardingRouting;
  /** The entity behavior; undefined: this node's region is a proxy (hosts nothing). */
  readonly createBehavior: ((ctx: EntityContext) => Behavior<unknown>) | undefined;
  /** Only a proxy: no coordinator manager on this node (startProxy). */
  readonly proxyOnly?: boolean;
  /** The schema check of the type's messages arriving from other members (docs/evolution.md). */
  readonly checkInbound?: (message: unknown) => unknown;
}

// ---- the resolved spec -----------------------------------------------------------------------

/** The stores of one entity type, resolved from its options. */
export interface ResolvedStores {
  readonly rememberEntities: boolean;
  readonly rememberStore: RememberEntitiesStore | undefined;
  readonly coordinatorStore: (() => CoordinatorStore) | undefined;
  /**
   * stateStoreMode "ddata": the replicator's options. The coordinator store (and the
   * remember store, unless one was given) are made from the type's replicator when the
   * type starts (startShardingType), as they need the node.
   */
  readonly ddata: ResolvedShardingDData | undefined;
}

/** One entity type on this node, every option resolved (see the module comment). */
export interface ShardingTypeSpec {
  readonly typeName: string;
  readonly role: string | undefined;
  /** As given (the region's registration warnings tell it from `role`). */
  readonly coordinatorRole: string | undefined;
  readonly routing: ShardingRouting;
  readonly createBehavior: ((ctx: EntityContext) => Behavior<unknown>) | undefined;
  readonly proxyOnly: boolean;
  readonly checkInbound: ((message: unknown) => unknown) | undefined;
  readonly handOffStopMessage: unknown;
  readonly allocationStrategy: ShardAllocationStrategy;
  readonly lifecycle: ShardingLifecycleListener | undefined;
  readonly settings: {
    readonly coordinator: Readonly<CoordinatorSettings>;
    readonly region: Readonly<RegionSettings>;
    readonly shard: Readonly<ShardSettings>;
  };
  readonly stores: ResolvedStores;
  /** How long after a downed member's removal its shards may start elsewhere. */
  readonly removalMarginMs: number;
  /** Shard leases, resolved (undefined: off). */
  readonly lease: ResolvedShardLease | undefined;
  /** false: this type is not traced (ShardingTypeOptions.tracing). */
  readonly tracing: boolean;
}

/** A type's shard leases, every setting resolved. */
export interface ResolvedShardLease {
  readonly store: LeaseStore;
  readonly settings: Readonly<ShardLeaseSettings>;
  readonly journals: readonly Journal[];
}

/**
 * Resolves the `lease` option.
 * @throws ConfigError naming the bad key.
 */
export function resolveShardLease(
  o: ShardLeaseOption | undefined,
  persistence: ShardingStoreOptions["persistence"],
): ResolvedShardLease | undefined {
  if (o === undefined) return undefined;
  if (typeof o !== "object" || o === null || typeof o.provider?.acquireLease !== "function")
    throw new ConfigError(
      "lease.provider",
      (o as { provider?: unknown } | null)?.provider,
      "a LeaseStore (e.g. sqlitePersistence(...).leases)",
    );
  const { provider, journals, ...timings } = o;
  if (journals !== undefined && !Array.isArray(journals))
    throw new ConfigError("lease.journals", journals, "an array of Journals");
  return {
    store: provider,
    settings: resolveShardLeaseSettings(timings),
    journals: journals ?? (persistence === undefined ? [] : [persistence.journal]),
  };
}

/**
 * Resolves a type's options once: settings (validated), stores, removal margin.
 * @throws ConfigError naming the bad key.
 */
export function resolveShardingTypeSpec(
  input: ShardingTypeInput,
  cluster: Cluster,
  now: () => number,
): ShardingTypeSpec {
  const stores = resolveShardingStores(input.typeName, input, input.settings, now);
  const removalMarginMs = shardRemovalMarginOf(cluster);
  const lease = resolveShardLease(input.lease, input.persistence);
  if (input.tracing !== undefined && typeof input.tracing !== "boolean")
    throw new ConfigError("tracing", input.tracing, "a boolean");
  const leasedOverride = (input.settings?.coordinator as { shardsLeased?: unknown } | undefined)
    ?.shardsLeased;
  if (leasedOverride !== undefined)
    throw new ConfigError(
      "settings.coordinator.shardsLeased",
      leasedOverride,
      "not a setting of its own: it follows the type's `lease` option",
    );
  const { rememberEntities } = stores;
  return {
    typeName: input.typeName,
    role: input.role,
    coordinatorRole: input.coordinatorRole,
    routing: input.routing,
    createBehavior: input.createBehavior,
    proxyOnly: input.proxyOnly === true,
    checkInbound: input.checkInbound,
    handOffStopMessage: input.handOffStopMessage,
    allocationStrategy: input.allocationStrategy ?? leastShardStrategy(),
    lifecycle: input.lifecycle,
    tracing: input.tracing !== false,
    settings: {
      coordinator: resolveCoordinatorSettings({
        // a new coordinator rebuilds its table from the live regions: it must not start
        // before the downed side has stopped the shards it ran (see shardRemovalMarginOf).
        // With shard leases the new home cannot start a shard before the old holder's
        // lease expired, so a removed region's shards move at once.
        regionRemovalMarginMs: lease === undefined ? removalMarginMs : 0,
        ...input.settings?.coordinator,
        // and those of an unreachable member move without waiting for its removal
        shardsLeased: lease !== undefined,
        rememberEntities,
      }),
      region: resolveRegionSettings(input.settings?.region),
      shard: resolveShardSettings({ ...input.settings?.shard, rememberEntities }),
    },
    stores,
    removalMarginMs,
    lease,
  };
}

/**
 * Picks the coordinator store and remember-entities store of `typeName`. `settings` is
 * only checked: rememberEntities belongs in the options, not in the settings.
 * @throws ConfigError when a mode needs a store that was not given.
 */
export function resolveShardingStores(
  typeName: string,
  o: ShardingStoreOptions,
  settings: ShardingSettingsOptions | undefined,
  now: () => number,
): ResolvedStores {
  const p = o.persistence;
  if (p !== undefined && (typeof p !== "object" || typeof p.journal?.append !== "function"))
    throw new ConfigError("persistence.journal", p, "a Journal (e.g. sqlitePersistence().journal)");
  const mode = o.stateStoreMode ?? (p === undefined ? "regions" : "persistence");
  if (mode !== "regions" && mode !== "persistence" && mode !== "ddata")
    throw new ConfigError("stateStoreMode", mode, '"regions", "persistence" or "ddata"');
  if (o.ddata !== undefined && mode !== "ddata")
    throw new ConfigError("ddata", o.ddata, 'nothing, unless stateStoreMode is "ddata"');
  if (mode === "persistence" && p === undefined)
    throw new ConfigError(
      "stateStoreMode",
      mode,
      '"regions", or give `persistence: { journal }` for "persistence"',
    );
  for (const part of ["coordinator", "shard"] as const) {
    const misplaced = (settings?.[part] as { rememberEntities?: unknown } | undefined)
      ?.rememberEntities;
    if (misplaced !== undefined)
      throw new ConfigError(
        `settings.${part}.rememberEntities`,
        misplaced,
        "nothing here: set the `rememberEntities` option of the entity type",
      );
  }
  const rememberEntities = o.rememberEntities ?? false;
  if (typeof rememberEntities !== "boolean")
    throw new ConfigError("rememberEntities", rememberEntities, "a boolean");
  const ddata = mode === "ddata" ? resolveShardingDData(o.ddata, rememberEntities) : undefined;
  let rememberStore: RememberEntitiesStore | undefined;
  if (rememberEntities && ddata === undefined) {
    rememberStore =
      o.rememberEntitiesStore ??
      (p === undefined ? undefined : new JournalRememberEntitiesStore(p.journal, p.snapshots, now));
    if (rememberStore === undefined)
      throw new ConfigError(
        "rememberEntities",
        true,
        "false, or true together with `rememberEntitiesStore` or `persistence: { journal }`",
      );
  }
  if (rememberEntities && ddata !== undefined) rememberStore = o.rememberEntitiesStore;
  return {
    rememberEntities,
    rememberStore,
    coordinatorStore:
      mode === "persistence" && p !== undefined
        ? () => new JournalCoordinatorStore(p.journal, p.snapshots, typeName, now)
        : undefined,
    ddata,
  };
}

/**
 * How long after a downed member's removal its shards may start elsewhere (and a new
 * coordinator take over): the cluster's downRemovalMarginMs, or else the split brain
 * resolver's stableAfterMs plus its down-all-when-unstable bound. The downed side stops
 * by itself once its own resolver decides: after stableAfterMs of stability, or — if its
 * view kept changing — after stableAfterMs + downAllWhenUnstable from the first change
 * (S20 found a minority, kept unstable by pauses, still running shards that had been
 * restarted on the surviving side after a stableAfterMs-only margin). Akka's
 * down-removal-margin defaults to stable-after, never shorter there than the down-all
 * bound (3/4 of it); here that bound has a 4 s floor.
 */
export function shardRemovalMarginOf(cluster: Cluster): number {
  if (cluster.settings.downRemovalMarginMs > 0) return cluster.settings.downRemovalMarginMs;
  const sbr = cluster.sbrSettings;
  return sbr.stableAfterMs + downAllWhenUnstableMsOf(sbr);
}

// ---- routing ---------------------------------------------------------------------------------

/**
 * Routing of the `init` style: messages are `{ entityId, message }` envelopes (or
 * StartEntity), the shard id a hash of the entity id.
 * @throws ConfigError on a bad numberOfShards.
 */
export function hashRouting(
  numberOfShards: number,
  algorithm: ShardIdAlgorithm = DEFAULT_SHARD_ID_ALGORITHM,
): ShardingRouting {
  validateNumberOfShards(numberOfShards);
  const hash = shardIdFunctions[algorithm];
  return {
    preRouted: true,
    shardOf: (entityId) => hash(entityId, numberOfShards),
    route: (m) => {
      if (isStartEntity(m))
        return new EntityEnvelope(hash(m.entityId, numberOfShards), m.entityId, m);
      if (typeof m !== "object" || m === null) return undefined;
      const e = m as { entityId?: unknown; message?: unknown };
      if (typeof e.entityId !== "string" || !("message" in e)) return undefined;
      return new EntityEnvelope(hash(e.entityId, numberOfShards), e.entityId, e.message);
    },
  };
}

// ---- starting ---------------------------------------------------------------------------------

/** What a started type gives its API: the local region and the coordinator (singleton proxy). */
export interface StartedShardingType {
  readonly spec: ShardingTypeSpec;
  readonly region: ActorRef<unknown>;
  readonly coordinator: ActorRef<ShardingMsg>;
  /** Spans for this type's messages (undefined: not traced). */
  readonly tracing: Tracing | undefined;
}

/**
 * Cap of the graceful hand-off wait in the shutdown task; the phase's own timeout
 * (shutdown settings, cluster-sharding-shutdown-region) aborts it first through its signal.
 */
const HAND_OFF_WAIT_CAP_MS = 3_600_000;

/** A type's region is the system actor `sharding-<type>`. */
const REGION_NAME_PREFIX = "sharding-";

/**
 * The entity type of the actor at `path` when it is an entity of a sharded type, found in
 * its path `/system/sharding-<type>/shard-<shard id>/<entity>` (the region is named here,
 * its shards in region-actor.ts, their entities in shard-actor.ts); undefined for any
 * other actor. Callers check the name against the started types.
 */
export function shardedEntityTypeOf(path: ActorPath): string | undefined {
  const e = path.elements;
  if (e.length !== 4 || e[0] !== "system") return undefined;
  const region = e[1] as string;
  if (!region.startsWith(REGION_NAME_PREFIX) || !(e[2] as string).startsWith("shard-"))
    return undefined;
  return region.slice(REGION_NAME_PREFIX.length);
}

/** Starts the coordinator singleton (or its proxy), the region and the shutdown hooks. */
export function startShardingType(
  host: SingletonHost,
  spec: ShardingTypeSpec,
): StartedShardingType {
  const { system, remoting, cluster } = host;
  const name = spec.typeName;
  const singletonName = `shardCoordinator-${name}`;
  const coordinatorRole = spec.coordinatorRole ?? spec.role;
  const stores = withDDataStores(host, spec);
  const member = uniqueAddressToString(cluster.self);
  const lifecycle = bindShardLifecycle(spec.lifecycle, name, member);
  // With shard leases the coordinator singleton holds a lease of its own in the same store
  // and moves as soon as its member is unreachable and that lease expired (lease-guarded
  // take-over, docs/sharding.md "Leases and fencing"); every proxy follows it there.
  const leased = spec.lease;
  const proxySettings = leased === undefined ? undefined : { skipUnreachable: true };
  const coordinator = spec.proxyOnly
    ? ClusterSingleton.proxy<ShardingMsg>(host, singletonName, coordinatorRole, proxySettings)
    : ClusterSingleton.init<ShardingMsg>(host, {
        name: singletonName,
        role: coordinatorRole,
        // a new coordinator rebuilds its table from the live regions: it must not start
        // before the downed side has stopped the shards it ran (see shardRemovalMarginOf).
        // With shard leases that is the leases' job (a new home cannot start a shard the
        // downed side may still run), so the coordinator needs no margin.
        ...(leased === undefined
          ? { settings: { removalMarginMs: spec.removalMarginMs } }
          : {
              settings: {
                removalMarginMs: 0,
                takeOverFromUnreachable: true,
                leaseRetryIntervalMs: leased.settings.acquireRetryIntervalMs,
              },
              lease: new CoordinatorLease(
                leased.store,
                coordinatorLeaseName(name),
                member,
                leased.settings,
                system.core.clock,
                system.core.scheduler,
              ),
              proxySettings,
            }),
        behavior: coordinatorBehavior({
          typeName: name,
          cluster,
          remoting,
          strategy: spec.allocationStrategy,
          role: spec.role,
          settings: spec.settings.coordinator,
          store: stores.coordinatorStore,
          // the margin counts once, from the removal (removal-times.ts)
          removals: new RemovalTimes(cluster, () => system.core.clock.now()),
          ...(lifecycle === undefined ? {} : { lifecycle }),
        }) as Behavior<ShardingMsg>,
      });
  const { rememberStore } = stores;
  // the node's tracing (ClusterNode.tracing), unless the type turns it off
  const tracing = spec.tracing ? (host as { readonly tracing?: Tracing }).tracing : undefined;
  const region = system.core.systemGuardian.spawnChild(
    regionBehavior({
      typeName: name,
      member,
      remoting,
      cluster,
      coordinatorProxy: coordinator,
      role: spec.role,
      coordinatorRole: spec.coordinatorRole,
      route: spec.routing.route,
      checkInbound: spec.checkInbound,
      createBehavior: spec.createBehavior,
      handOffStopMessage: spec.handOffStopMessage,
      settings: spec.settings.region,
      shardSettings: spec.settings.shard,
      remember:
        rememberStore === undefined
          ? undefined
          : { typeName: name, store: rememberStore, shardOf: spec.routing.shardOf },
      lifecycle,
      lease: spec.lease,
      ...(tracing === undefined ? {} : { tracing }),
    }),
    `${REGION_NAME_PREFIX}${name}`,
    undefined,
  );
  installShutdown(host, name, region as ActorRef<RegionControl>);
  return { spec, region, coordinator, tracing };
}

/**
 * stateStoreMode "ddata": the remembered entities are replicated among the members with
 * the type's role, the coordinator's state among those with the coordinator's role (one
 * replicator when the two are the same, as usual). A member starts the replicator of each
 * role it has; a member with neither only proxies: it neither replicates nor stores.
 */
function withDDataStores(host: SingletonHost, spec: ShardingTypeSpec): ResolvedStores {
  const { ddata, rememberEntities } = spec.stores;
  if (ddata === undefined) return spec.stores;
  const roles = host.cluster.selfRoles;
  const has = (role: string | undefined) => role === undefined || roles.includes(role);
  const role = spec.role;
  const coordinatorRole = spec.coordinatorRole ?? role;
  const shared = coordinatorRole === role;
  const typeReplicator = has(role)
    ? startShardingReplicator(host, spec.typeName, role, ddata, shared ? "all" : "shards")
    : undefined;
  const coordinatorReplicator = shared
    ? typeReplicator
    : has(coordinatorRole)
      ? startShardingReplicator(host, spec.typeName, coordinatorRole, ddata, "coordinator")
      : undefined;
  return {
    ...spec.stores,
    rememberStore:
      rememberEntities && typeReplicator !== undefined
        ? (spec.stores.rememberStore ?? new DDataRememberEntitiesStore(typeReplicator, ddata))
        : spec.stores.rememberStore,
    coordinatorStore:
      coordinatorReplicator === undefined
        ? undefined
        : () =>
            new DDataCoordinatorStore(
              coordinatorReplicator,
              spec.typeName,
              rememberEntities,
              ddata,
            ),
  };
}

/**
 * Graceful shutdown (coordinated-shutdown phase cluster-sharding-shutdown-region): the
 * region hands all its shards off before the node leaves. A downed node stops its
 * entities at once.
 */
function installShutdown(host: SingletonHost, name: string, region: ActorRef<RegionControl>): void {
  const { coordinatedShutdown, cluster } = host;
  coordinatedShutdown?.addTask("cluster-sharding-shutdown-region", `sharding-${name}`, (task) =>
    ask(
      region,
      (replyTo: ActorRef<"stopped">) => ({
        type: "shardkit.region.graceful-shutdown",
        replyTo,
      }),
      { timeoutMs: HAND_OFF_WAIT_CAP_MS, signal: task.signal },
    ).then(() => undefined),
  );
  // A hand-off cut short by that phase's timeout leaves shards running. They stop before
  // the member leaves: once a leaver is removed, a coordinator that never knew its shards
  // (one started meanwhile, in regions recovery) may start them elsewhere at once (S20
  // seed 416). After a completed hand-off the region has stopped and ignores this.
  coordinatedShutdown?.addTask("cluster-leave", `sharding-${name}-stop`, () => {
    region.tell({ type: "shardkit.region.stop" });
  });
  const selfKey = uniqueAddressToString(cluster.self);
  cluster.subscribe((e) => {
    if (e.type === "member-downed" && uniqueAddressToString(e.member.uniqueAddress) === selfKey)
      region.tell({ type: "shardkit.region.self-downed" });
  });
}
