/**
 * ClusterSharding: the typed sharding API of a node. `init` starts this node's region
 * for an entity type (and the type's coordinator singleton); `entityRefFor` addresses
 * one entity by id from anywhere in the cluster.
 *
 * ```ts
 * const Cart = EntityTypeKey<CartMsg>("Cart");
 * const sharding = ClusterSharding.get(node);
 * sharding.init({ typeKey: Cart, createBehavior: ({ entityId }) => cart(entityId) });
 * sharding.entityRefFor(Cart, "cart-42").tell({ type: "add", sku: "tea" });
 * ```
 */
import type { ActorRef } from "../actor/actor-ref.js";
import { type AskOptions, ask } from "../actor/ask.js";
import type { Behavior } from "../actor/behavior.js";
import { ConfigError, ShardkitError } from "../base/errors.js";
import type { Cluster } from "../cluster/membership/cluster.js";
import type { ShardAllocationStrategy } from "../cluster/sharding/async-strategy.js";
import { coordinatorBehavior } from "../cluster/sharding/coordinator-actor.js";
import {
  type CoordinatorStore,
  JournalCoordinatorStore,
} from "../cluster/sharding/coordinator-store.js";
import { JournalRememberEntitiesStore } from "../cluster/sharding/journal-remember-entities-store.js";
import {
  type RegionControl,
  type RegionState,
  regionBehavior,
} from "../cluster/sharding/region-actor.js";
import type { EntityContext } from "../cluster/sharding/shard-actor.js";
import {
  bindShardLifecycle,
  type ShardingLifecycleListener,
} from "../cluster/sharding/sharding-lifecycle.js";
import {
  EntityDelivery,
  type ShardingMsg,
  splitActorId,
} from "../cluster/sharding/sharding-messages.js";
import { ClusterSingleton, type SingletonHost } from "../cluster/singleton/cluster-singleton.js";
import type { CoordinatorSettings } from "../core/coordinator/coordinator-settings.js";
import { leastShardStrategy } from "../core/coordinator/coordinator-strategy.js";
import { downAllWhenUnstableMsOf } from "../core/downing/sbr-settings.js";
import { uniqueAddressToString } from "../core/membership/unique-address.js";
import type { RegionSettings } from "../core/region/region-settings.js";
import type { ShardSettings } from "../core/shard/shard-settings.js";
import {
  DEFAULT_SHARD_ID_ALGORITHM,
  type ShardIdAlgorithm,
  shardIdFunctions,
  validateNumberOfShards,
} from "../core/sharding/shard-id.js";
import type { Journal } from "../ports/journal.js";
import type { RememberEntitiesStore } from "../ports/remember-entities-store.js";
import type { SnapshotStore } from "../ports/snapshot-store.js";
import {
  isStartEntity,
  type MessageExtractor,
  ShardingEnvelope,
  StartEntity,
} from "./message-extractor.js";

/** Names an entity type and the type of its messages. */
export interface EntityTypeKey<M> {
  readonly name: string;
  /** Phantom: carries M; never set. */
  readonly __message?: M;
}

export function EntityTypeKey<M>(name: string): EntityTypeKey<M> {
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(name))
    throw new ShardkitError(
      "CONFIG_INVALID",
      `invalid entity type name "${name}": letters, digits, '_', '.', '-'`,
      { name },
    );
  return { name };
}

/** What `createBehavior` receives for each entity. */
export type EntityCreationContext = EntityContext;

/** Where the coordinator keeps its state (see docs/sharding.md, "State stores"). */
export type StateStoreMode = "regions" | "persistence";

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
   * allocation is written to `persistence.journal` before it is announced. Default:
   * "persistence" when `persistence` is given, else "regions".
   */
  readonly stateStoreMode?: StateStoreMode;
  /**
   * Restart this type's entities after a rebalance, a crash, a coordinator fail-over and
   * a full restart, without waiting for a message (default false). Needs
   * `rememberEntitiesStore` or `persistence`. Automatic passivation is off meanwhile.
   */
  readonly rememberEntities?: boolean;
  /** Where remembered entity ids are kept. Default: a journal store on `persistence`. */
  readonly rememberEntitiesStore?: RememberEntitiesStore;
}

export interface ShardedEntityOptions<M> extends ShardingStoreOptions {
  readonly typeKey: EntityTypeKey<M>;
  readonly createBehavior: (ctx: EntityCreationContext) => Behavior<M>;
  /** Default 100; must be the same on every node. */
  readonly numberOfShards?: number;
  /** Shard id hash (default "murmur3"; see HashCodeMessageExtractor). */
  readonly shardIdAlgorithm?: ShardIdAlgorithm;
  /** Host entities only on members with this role (others get a proxy region). */
  readonly role?: string;
  /**
   * Run the coordinator singleton on the oldest member with this role instead of `role`
   * (default: `role`). Must be the same on every node that starts the type.
   */
  readonly coordinatorRole?: string;
  /** Sent to each entity when its shard is handed off (default: stop). */
  readonly handOffStopMessage?: M;
  readonly allocationStrategy?: ShardAllocationStrategy;
  /** Told when this node's shards and entities start and stop (see ShardingOracle in shardkit/testing). */
  readonly lifecycle?: ShardingLifecycleListener;
  readonly settings?: {
    readonly coordinator?: Partial<CoordinatorSettings>;
    readonly region?: Partial<RegionSettings>;
    readonly shard?: Partial<ShardSettings>;
  };
}

/** A handle on one entity, wherever it lives. */
export interface EntityRef<M> {
  readonly typeName: string;
  readonly entityId: string;
  tell(message: M): void;
  ask<R>(makeMessage: (replyTo: ActorRef<R>) => M, options?: AskOptions): Promise<R>;
}

interface TypeEntry {
  readonly region: ActorRef<unknown>;
  readonly coordinator: ActorRef<ShardingMsg>;
  readonly shardOf: (entityId: string) => string;
  /** Started with `init`: EntityRefs send pre-routed EntityDelivery messages. */
  readonly preRouted: boolean;
  /** Entities of this type run on this node (not a proxy, role matches). */
  readonly hosts: boolean;
}

type Route = { entityId: string; shardId: string; message: unknown } | undefined;

interface TypeStart {
  readonly role: string | undefined;
  readonly coordinatorRole?: string;
  readonly lifecycle?: ShardingLifecycleListener;
  /** `route` of a ShardingEnvelope gives exactly shardOf(entityId) and its message. */
  readonly preRouted?: boolean;
  readonly route: (message: unknown) => Route;
  readonly shardOf: (entityId: string) => string;
  readonly createBehavior: ((ctx: EntityContext) => Behavior<unknown>) | undefined;
  readonly handOffStopMessage?: unknown;
  readonly allocationStrategy?: ShardAllocationStrategy;
  readonly settings?: ShardedEntityOptions<unknown>["settings"];
  readonly stores?: ShardingStoreOptions;
  /** Only a proxy: no coordinator manager on this node (startProxy). */
  readonly proxyOnly?: boolean;
}

/** The classic `start` form (seed 000). */
export interface ClassicShardingOptions<In, M> extends ShardingStoreOptions {
  readonly typeName: string;
  /** The behavior of one entity. */
  readonly entity: (entityId: string, ctx: EntityCreationContext) => Behavior<M>;
  readonly extractor: MessageExtractor<In, M>;
  readonly role?: string;
  /** See ShardedEntityOptions.coordinatorRole. */
  readonly coordinatorRole?: string;
  readonly handOffStopMessage?: M;
  readonly allocationStrategy?: ShardAllocationStrategy;
  readonly lifecycle?: ShardingLifecycleListener;
  readonly settings?: ShardedEntityOptions<unknown>["settings"];
}

/** Shards and their live entities in one region. */
export type ShardRegionState = RegionState;

/** Entities per shard in every region; regions that did not answer in time are listed as failed. */
export interface ClusterShardingStats {
  readonly regions: readonly {
    readonly region: string;
    readonly shards: Readonly<Record<string, number>>;
  }[];
  readonly failed: readonly string[];
}

/** Where an entity lives (undefined region: its shard has no known home yet). */
export interface EntityLocation {
  readonly entityId: string;
  readonly shardId: string;
  readonly region: string | undefined;
  readonly alive: boolean;
}

/** Shards per entity type when `numberOfShards` is not given (same on every node). */
const NUMBER_OF_SHARDS_DEFAULT = 100;

/**
 * Cap of the graceful hand-off wait in the shutdown task; the phase's own timeout
 * (shutdown settings, cluster-sharding-shutdown-region) aborts it first through its signal.
 */
const HAND_OFF_WAIT_CAP_MS = 3_600_000;

/** Default timeout of the queries, in ms. */
const QUERY_TIMEOUT_MS_DEFAULT = 5_000;

const instances = new WeakMap<SingletonHost, ClusterSharding>();

export class ClusterSharding {
  private readonly types = new Map<string, TypeEntry>();

  private constructor(private readonly host: SingletonHost) {}

  /** The sharding extension of a node (one per node). */
  static get(host: SingletonHost): ClusterSharding {
    let s = instances.get(host);
    if (s === undefined) {
      s = new ClusterSharding(host);
      instances.set(host, s);
    }
    return s;
  }

  /** Starts the region of `typeKey` on this node (and its coordinator singleton). */
  init<M>(options: ShardedEntityOptions<M>): ActorRef<ShardingEnvelope<M>> {
    const numberOfShards = options.numberOfShards ?? NUMBER_OF_SHARDS_DEFAULT;
    validateNumberOfShards(numberOfShards);
    const hash = shardIdFunctions[options.shardIdAlgorithm ?? DEFAULT_SHARD_ID_ALGORITHM];
    const hosts = options.role === undefined || this.host.cluster.selfRoles.includes(options.role);
    return this.startType(options.typeKey.name, {
      role: options.role,
      coordinatorRole: options.coordinatorRole,
      lifecycle: options.lifecycle,
      preRouted: true,
      route: (m) => routeOf(m, numberOfShards, hash),
      shardOf: (entityId) => hash(entityId, numberOfShards),
      createBehavior: hosts ? (ctx) => options.createBehavior(ctx) as Behavior<unknown> : undefined,
      handOffStopMessage: options.handOffStopMessage,
      allocationStrategy: options.allocationStrategy,
      settings: options.settings,
      stores: options,
    }) as ActorRef<ShardingEnvelope<M>>;
  }

  /**
   * Classic form: starts the region of `typeName`, routing with a MessageExtractor (see
   * HashCodeMessageExtractor). Messages sent to the returned region are routed by
   * `extractor.entityId` / `shardId`; the entity receives `extractor.entityMessage(msg)`.
   */
  start<In, M>(options: ClassicShardingOptions<In, M>): ActorRef<In> {
    const { extractor } = options;
    return this.startType(checkTypeName(options.typeName), {
      role: options.role,
      coordinatorRole: options.coordinatorRole,
      lifecycle: options.lifecycle,
      route: (m) => routeByExtractor(extractor, m),
      shardOf: (entityId) => extractor.shardId(StartEntity(entityId)),
      createBehavior: (ctx) => options.entity(ctx.entityId, ctx) as Behavior<unknown>,
      handOffStopMessage: options.handOffStopMessage,
      allocationStrategy: options.allocationStrategy,
      settings: options.settings,
      stores: options,
    }) as ActorRef<In>;
  }

  /** Classic form: a region on this node that routes to `typeName` but never hosts entities. */
  startProxy<In>(options: {
    typeName: string;
    role?: string;
    /** See ShardedEntityOptions.coordinatorRole. */
    coordinatorRole?: string;
    extractor: MessageExtractor<In, unknown>;
  }): ActorRef<In> {
    const { extractor } = options;
    return this.startType(checkTypeName(options.typeName), {
      role: options.role,
      coordinatorRole: options.coordinatorRole,
      route: (m) => routeByExtractor(extractor, m),
      shardOf: (entityId) => extractor.shardId(StartEntity(entityId)),
      createBehavior: undefined,
      proxyOnly: true,
    }) as ActorRef<In>;
  }

  /** Entity types started on this node; `hosting`: only those whose entities can run here. */
  typeNames(options: { hosting?: boolean } = {}): readonly string[] {
    return [...this.types]
      .filter(([, e]) => options.hosting !== true || e.hosts)
      .map(([name]) => name);
  }

  /** The region of `typeName` started on this node (by init, start or startProxy). */
  shardRegion<In = unknown>(typeName: string): ActorRef<In> {
    return this.entry({ name: typeName }).region as ActorRef<In>;
  }

  private startType(name: string, t: TypeStart): ActorRef<unknown> {
    const existing = this.types.get(name);
    if (existing !== undefined) return existing.region;
    const { system, remoting, cluster } = this.host;
    const now = () => system.core.clock.now();
    const stores = resolveShardingStores(name, t.stores ?? {}, t.settings, now);
    const singletonName = `shardCoordinator-${name}`;
    const coordinatorRole = t.coordinatorRole ?? t.role;
    const removalMarginMs = shardRemovalMarginOf(cluster);
    const coordinator = t.proxyOnly
      ? ClusterSingleton.proxy<ShardingMsg>(this.host, singletonName, coordinatorRole)
      : ClusterSingleton.init<ShardingMsg>(this.host, {
          name: singletonName,
          role: coordinatorRole,
          // a new coordinator rebuilds its table from the live regions: it must not start
          // before the downed side has stopped the shards it ran (see shardRemovalMarginOf)
          settings: { removalMarginMs },
          behavior: coordinatorBehavior({
            typeName: name,
            cluster,
            remoting,
            strategy: t.allocationStrategy ?? leastShardStrategy(),
            role: t.role,
            settings: {
              regionRemovalMarginMs: removalMarginMs,
              ...t.settings?.coordinator,
              rememberEntities: stores.rememberEntities,
            },
            store: stores.coordinatorStore,
          }) as Behavior<ShardingMsg>,
        });
    const region = system.core.systemGuardian.spawnChild(
      regionBehavior({
        typeName: name,
        member: uniqueAddressToString(cluster.self),
        remoting,
        cluster,
        coordinatorProxy: coordinator,
        role: t.role,
        coordinatorRole: t.coordinatorRole,
        route: t.route,
        createBehavior: t.createBehavior,
        handOffStopMessage: t.handOffStopMessage,
        settings: t.settings?.region,
        shardSettings: { ...t.settings?.shard, rememberEntities: stores.rememberEntities },
        remember:
          stores.rememberStore === undefined
            ? undefined
            : { typeName: name, store: stores.rememberStore, shardOf: t.shardOf },
        lifecycle: bindShardLifecycle(t.lifecycle, name, uniqueAddressToString(cluster.self)),
      }),
      `sharding-${name}`,
      undefined,
    );
    this.types.set(name, {
      region,
      coordinator,
      shardOf: t.shardOf,
      preRouted: t.preRouted === true,
      hosts: t.createBehavior !== undefined,
    });
    this.installShutdown(name, region as ActorRef<RegionControl>);
    return region;
  }

  /**
   * Graceful shutdown (coordinated-shutdown phase cluster-sharding-shutdown-region): the
   * region hands all its shards off before the node leaves. A downed node stops its
   * entities at once.
   */
  private installShutdown(name: string, region: ActorRef<RegionControl>): void {
    const { coordinatedShutdown, cluster } = this.host;
    coordinatedShutdown?.addTask("cluster-sharding-shutdown-region", `sharding-${name}`, (task) =>
      ask(
        region,
        (replyTo: ActorRef<"stopped">) => ({ sk: "region", t: "graceful-shutdown", replyTo }),
        {
          timeoutMs: HAND_OFF_WAIT_CAP_MS,
          signal: task.signal,
        },
      ).then(() => undefined),
    );
    const selfKey = uniqueAddressToString(cluster.self);
    cluster.subscribe((e) => {
      if (e.type === "member-downed" && uniqueAddressToString(e.member.uniqueAddress) === selfKey)
        region.tell({ sk: "region", t: "self-downed" });
    });
  }

  private entry(typeKey: { readonly name: string }): TypeEntry {
    const entry = this.types.get(typeKey.name);
    if (entry === undefined)
      throw new ShardkitError(
        "SHARDING_TYPE_NOT_STARTED",
        `entity type "${typeKey.name}" is not initialised on this node`,
        {
          typeName: typeKey.name,
        },
      );
    return entry;
  }

  /** GetShardRegionState: this node's shards of `typeKey` and their live entities. */
  getShardRegionState(
    typeKey: EntityTypeKey<unknown>,
    options: { timeoutMs?: number } = {},
  ): Promise<ShardRegionState> {
    const timeoutMs = options.timeoutMs ?? QUERY_TIMEOUT_MS_DEFAULT;
    return ask(
      this.entry(typeKey).region as ActorRef<RegionControl>,
      (replyTo: ActorRef<RegionState>) => ({ sk: "region", t: "get-state", timeoutMs, replyTo }),
      { timeoutMs: timeoutMs * 2 },
    );
  }

  /** GetCurrentRegions: the regions registered with the coordinator of `typeKey`. */
  getCurrentRegions(
    typeKey: EntityTypeKey<unknown>,
    options: { timeoutMs?: number } = {},
  ): Promise<readonly string[]> {
    return ask(
      this.entry(typeKey).coordinator,
      (replyTo: ActorRef<readonly string[]>) => ({ sk: "sharding", t: "get-regions", replyTo }),
      { timeoutMs: options.timeoutMs ?? QUERY_TIMEOUT_MS_DEFAULT },
    );
  }

  /** GetClusterShardingStats: entities per shard in every region; silent regions are `failed`. */
  async getClusterShardingStats(
    typeKey: EntityTypeKey<unknown>,
    options: { timeoutMs?: number } = {},
  ): Promise<ClusterShardingStats> {
    const timeoutMs = options.timeoutMs ?? QUERY_TIMEOUT_MS_DEFAULT;
    const regions = await this.getCurrentRegions(typeKey, { timeoutMs });
    const answers = await Promise.all(
      regions.map((region) =>
        this.regionState(region, timeoutMs).then(
          (st): { region: string; st: RegionState | undefined } => ({ region, st }),
          () => ({ region, st: undefined }),
        ),
      ),
    );
    const ok: { region: string; shards: Record<string, number> }[] = [];
    const failed: string[] = [];
    for (const a of answers) {
      if (a.st === undefined) failed.push(a.region);
      else
        ok.push({
          region: a.region,
          shards: Object.fromEntries(a.st.shards.map((sh) => [sh.shardId, sh.entityIds.length])),
        });
    }
    return { regions: ok, failed };
  }

  /** GetEntityLocation: always answers; an unknown home gives region undefined and alive false. */
  async getEntityLocation(
    typeKey: EntityTypeKey<unknown>,
    entityId: string,
    options: { timeoutMs?: number } = {},
  ): Promise<EntityLocation> {
    const entry = this.entry(typeKey);
    const timeoutMs = options.timeoutMs ?? QUERY_TIMEOUT_MS_DEFAULT;
    const shardId = entry.shardOf(entityId);
    const home = await ask(
      entry.region as ActorRef<RegionControl>,
      (replyTo: ActorRef<{ readonly region: string | null }>) => ({
        sk: "region",
        t: "get-home",
        shard: shardId,
        replyTo,
      }),
      { timeoutMs },
    ).catch(() => ({ region: null }));
    if (home.region === null) return { entityId, shardId, region: undefined, alive: false };
    const st = await this.regionState(home.region, timeoutMs).catch(() => undefined);
    const alive =
      st?.shards.some((sh) => sh.shardId === shardId && sh.entityIds.includes(entityId)) ?? false;
    return { entityId, shardId, region: home.region, alive };
  }

  private regionState(region: string, timeoutMs: number): Promise<RegionState> {
    const p = splitActorId(region);
    if (p === undefined)
      return Promise.reject(
        new ShardkitError("INVALID_ADDRESS", `bad region id ${region}`, { region }),
      );
    const ref = this.host.remoting.actorRefFor<RegionControl>(p.node, p.path);
    return ask(
      ref,
      (replyTo: ActorRef<RegionState>) => ({ sk: "region", t: "get-state", timeoutMs, replyTo }),
      {
        timeoutMs: timeoutMs * 2,
      },
    );
  }

  /** A ref to the entity `entityId` of `typeKey` (init the type on this node first). */
  entityRefFor<M>(typeKey: EntityTypeKey<M>, entityId: string): EntityRef<M> {
    const entry = this.entry(typeKey as EntityTypeKey<unknown>);
    // The region would route the envelope to exactly this shard: compute it once.
    if (entry.preRouted)
      return new PreRoutedEntityRef(typeKey.name, entityId, entry.shardOf(entityId), entry.region);
    const region = entry.region as ActorRef<ShardingEnvelope<M>>;
    return {
      typeName: typeKey.name,
      entityId,
      tell: (message) => region.tell(ShardingEnvelope(entityId, message)),
      ask: <R>(make: (replyTo: ActorRef<R>) => M, opts?: AskOptions) =>
        ask(
          region as ActorRef<ShardingEnvelope<M>>,
          (replyTo: ActorRef<R>) => ShardingEnvelope(entityId, make(replyTo)),
          opts,
        ),
    };
  }
}

/** The stores of one entity type, resolved from its options. */
interface ResolvedStores {
  readonly rememberEntities: boolean;
  readonly rememberStore: RememberEntitiesStore | undefined;
  readonly coordinatorStore: (() => CoordinatorStore) | undefined;
}

/**
 * Picks the coordinator store and remember-entities store of `typeName`.
 * @throws ConfigError when a mode needs a store that was not given.
 */
export function resolveShardingStores(
  typeName: string,
  o: ShardingStoreOptions,
  settings: ShardedEntityOptions<unknown>["settings"],
  now: () => number,
): ResolvedStores {
  const p = o.persistence;
  if (p !== undefined && (typeof p !== "object" || typeof p.journal?.append !== "function"))
    throw new ConfigError("persistence.journal", p, "a Journal (e.g. sqlitePersistence().journal)");
  const mode = o.stateStoreMode ?? (p === undefined ? "regions" : "persistence");
  if (mode !== "regions" && mode !== "persistence")
    throw new ConfigError("stateStoreMode", mode, '"regions" or "persistence"');
  if (mode === "persistence" && p === undefined)
    throw new ConfigError(
      "stateStoreMode",
      mode,
      '"regions", or give `persistence: { journal }` for "persistence"',
    );
  const rememberEntities =
    o.rememberEntities ??
    settings?.shard?.rememberEntities ??
    settings?.coordinator?.rememberEntities ??
    false;
  if (typeof rememberEntities !== "boolean")
    throw new ConfigError("rememberEntities", rememberEntities, "a boolean");
  let rememberStore: RememberEntitiesStore | undefined;
  if (rememberEntities) {
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
  return {
    rememberEntities,
    rememberStore,
    coordinatorStore:
      mode === "persistence" && p !== undefined
        ? () => new JournalCoordinatorStore(p.journal, p.snapshots, typeName, now)
        : undefined,
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
function shardRemovalMarginOf(cluster: Cluster): number {
  if (cluster.settings.downRemovalMarginMs > 0) return cluster.settings.downRemovalMarginMs;
  const sbr = cluster.sbrSettings;
  return sbr.stableAfterMs + downAllWhenUnstableMsOf(sbr);
}

/**
 * An EntityRef of an `init` type: tells its region EntityDelivery messages. tell and ask
 * are own properties (a ref may be spread, or its tell passed around), assigned in the
 * constructor so that a keepNames transpiler (tsx) does not rename them per ref.
 */
class PreRoutedEntityRef<M> implements EntityRef<M> {
  readonly typeName: string;
  readonly entityId: string;
  readonly tell: (message: M) => void;
  readonly ask: <R>(makeMessage: (replyTo: ActorRef<R>) => M, options?: AskOptions) => Promise<R>;

  constructor(typeName: string, entityId: string, shardId: string, region: ActorRef<unknown>) {
    this.typeName = typeName;
    this.entityId = entityId;
    this.tell = (message) => region.tell(new EntityDelivery(entityId, shardId, message));
    this.ask = <R>(makeMessage: (replyTo: ActorRef<R>) => M, options?: AskOptions) =>
      ask(
        region as ActorRef<EntityDelivery>,
        (replyTo: ActorRef<R>) => new EntityDelivery(entityId, shardId, makeMessage(replyTo)),
        options,
      );
  }
}

function routeByExtractor<In>(extractor: MessageExtractor<In, unknown>, m: unknown): Route {
  try {
    const msg = m as In | StartEntity;
    const entityId = extractor.entityId(msg);
    const shardId = extractor.shardId(msg);
    if (typeof entityId !== "string" || typeof shardId !== "string") return undefined;
    return { entityId, shardId, message: isStartEntity(m) ? m : extractor.entityMessage(m as In) };
  } catch {
    return undefined; // not a message of this type: unhandled
  }
}

function checkTypeName(name: string): string {
  return EntityTypeKey<unknown>(name).name;
}

function routeOf(
  m: unknown,
  numberOfShards: number,
  hash: (id: string, n: number) => string,
): { entityId: string; shardId: string; message: unknown } | undefined {
  if (isStartEntity(m))
    return { entityId: m.entityId, shardId: hash(m.entityId, numberOfShards), message: m };
  if (typeof m !== "object" || m === null) return undefined;
  const e = m as { entityId?: unknown; message?: unknown };
  if (typeof e.entityId !== "string" || !("message" in e)) return undefined;
  return { entityId: e.entityId, shardId: hash(e.entityId, numberOfShards), message: e.message };
}
