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
import { type AskOptions, ask, beginAsk } from "../actor/ask.js";
import type { Behavior } from "../actor/behavior.js";
import { ConfigError, InvalidAddressError } from "../base/errors.js";
import { isStandardSchema, messageCheck, type Schema } from "../base/schema.js";
import type { RegionState } from "../cluster/sharding/region-actor.js";
import type { EntityContext } from "../cluster/sharding/shard-actor.js";
import { ShardingTypeNotStartedError } from "../cluster/sharding/sharding-errors.js";
import type { ShardingLifecycleListener } from "../cluster/sharding/sharding-lifecycle.js";
import { splitActorId } from "../cluster/sharding/sharding-messages.js";
import {
  hashRouting,
  resolveShardingTypeSpec,
  type ShardingRouting,
  type ShardingTypeInput,
  type ShardingTypeOptions,
  type ShardLeaseOption,
  type StartedShardingType,
  startShardingType,
} from "../cluster/sharding/sharding-type.js";
import { entityAttributes, SpanNames, TracedMessage } from "../cluster/sharding/traced-message.js";
import type { SingletonHost } from "../cluster/singleton/cluster-singleton.js";
import {
  type TraceAttributes,
  type TraceContext,
  TraceSpanKind,
  type Tracing,
} from "../ports/tracing.js";
import { EntityEnvelope, type RegionControl, type ShardHandOffView } from "../protocol/sharding.js";
import { validatingRef } from "./entity-schema.js";
import {
  isStartEntity,
  type MessageExtractor,
  type ShardIdAlgorithm,
  ShardingEnvelope,
  StartEntity,
} from "./message-extractor.js";

export type { ShardingDDataOptions } from "../cluster/sharding/ddata-stores.js";
export type {
  ShardingSettingsOptions,
  ShardingStoreOptions,
  ShardingTypeOptions,
  ShardLeaseOption,
  StateStoreMode,
} from "../cluster/sharding/sharding-type.js";

/** Names an entity type and the type of its messages. */
export interface EntityTypeKey<M> {
  readonly name: string;
  /** The messages' schema, if the type has one (see EntityTypeKeyOptions). */
  readonly schema?: Schema<M>;
  /** Whether messages sent on this member are checked at the call site. */
  readonly validateLocal?: boolean;
  /** Phantom: carries M; never set. */
  readonly __message?: M;
}

/** Options of an entity type key. */
export interface EntityTypeKeyOptions<M> {
  /**
   * A Standard Schema (zod, valibot, arktype, ...) the type's messages must satisfy.
   * Messages from other members are checked before they reach the entity (an invalid one
   * becomes a dead letter carrying the issues); see `validateLocal` for this member's.
   */
  readonly schema?: Schema<M>;
  /**
   * Check messages sent through this member's EntityRefs at the call site: an invalid
   * `tell` throws MessageValidationError, an invalid `ask` rejects with it. Default true;
   * turn it off on hot paths where the compiler's check is enough.
   */
  readonly validateLocal?: boolean;
}

export function EntityTypeKey<M>(
  name: string,
  options: EntityTypeKeyOptions<M> = {},
): EntityTypeKey<M> {
  if (typeof name !== "string" || !/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(name))
    throw new ConfigError(
      "EntityTypeKey name",
      name,
      "letters, digits, '_', '.', '-', starting with a letter or digit",
    );
  const { schema, validateLocal = true } = options;
  if (schema !== undefined && !isStandardSchema(schema))
    throw new ConfigError(`EntityTypeKey(${name}).schema`, schema, "a Standard Schema validator");
  if (typeof validateLocal !== "boolean")
    throw new ConfigError(`EntityTypeKey(${name}).validateLocal`, validateLocal, "a boolean");
  return schema === undefined ? { name } : { name, schema, validateLocal };
}

/** What `createBehavior` receives for each entity. */
export type EntityCreationContext = EntityContext;

/** Options of `init`: an entity type addressed by `EntityTypeKey` and entity id. */
export interface ShardedEntityOptions<M> extends ShardingTypeOptions<M> {
  readonly typeKey: EntityTypeKey<M>;
  readonly createBehavior: (ctx: EntityCreationContext) => Behavior<M>;
  /** Default 100; must be the same on every node. */
  readonly numberOfShards?: number;
  /** Shard id hash (default "murmur3"; see HashCodeMessageExtractor). */
  readonly shardIdAlgorithm?: ShardIdAlgorithm;
}

/** A handle on one entity, wherever it lives. */
export interface EntityRef<M> {
  readonly typeName: string;
  readonly entityId: string;
  tell(message: M): void;
  ask<R>(makeMessage: (replyTo: ActorRef<R>) => M, options?: AskOptions): Promise<R>;
}

/** Options of the classic `start` (seed 000): messages routed by a MessageExtractor. */
export interface ClassicShardingOptions<In, M> extends ShardingTypeOptions<M> {
  readonly typeName: string;
  /** The behavior of one entity. */
  readonly entity: (entityId: string, ctx: EntityCreationContext) => Behavior<M>;
  readonly extractor: MessageExtractor<In, M>;
}

/** Options of the classic `startProxy`: routes to `typeName`, never hosts entities. */
export interface ShardingProxyOptions<In> {
  readonly typeName: string;
  readonly role?: string;
  /** See ShardingTypeOptions.coordinatorRole. */
  readonly coordinatorRole?: string;
  readonly extractor: MessageExtractor<In, unknown>;
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

/** A hand-off in progress (`getShardHandOffs`): a shard leaving its region. */
export type ShardHandOff = ShardHandOffView;

/** Where an entity lives (undefined region: its shard has no known home yet). */
export interface EntityLocation {
  readonly entityId: string;
  readonly shardId: string;
  readonly region: string | undefined;
  readonly alive: boolean;
}

/** Shards per entity type when `numberOfShards` is not given (same on every node). */
const NUMBER_OF_SHARDS_DEFAULT = 100;

/** Default timeout of the queries, in ms. */
const QUERY_TIMEOUT_MS_DEFAULT = 5_000;

const instances = new WeakMap<SingletonHost, ClusterSharding>();

export class ClusterSharding {
  private readonly types = new Map<string, StartedShardingType>();
  private readonly observers: ShardingLifecycleListener[] = [];

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
    const routing = hashRouting(
      options.numberOfShards ?? NUMBER_OF_SHARDS_DEFAULT,
      options.shardIdAlgorithm,
    );
    const { role, createBehavior } = options;
    const hosts = role === undefined || this.host.cluster.selfRoles.includes(role);
    return this.startType({
      ...options,
      typeName: options.typeKey.name,
      routing,
      checkInbound:
        options.typeKey.schema === undefined
          ? undefined
          : messageCheck(options.typeKey.name, options.typeKey.schema),
      createBehavior: hosts ? (ctx) => createBehavior(ctx) as Behavior<unknown> : undefined,
    }) as ActorRef<ShardingEnvelope<M>>;
  }

  /**
   * Classic form: starts the region of `typeName`, routing with a MessageExtractor (see
   * HashCodeMessageExtractor). Messages sent to the returned region are routed by
   * `extractor.entityId` / `shardId`; the entity receives `extractor.entityMessage(msg)`.
   */
  start<In, M>(options: ClassicShardingOptions<In, M>): ActorRef<In> {
    const { entity } = options;
    return this.startType({
      ...options,
      typeName: checkTypeName(options.typeName),
      routing: extractorRouting(options.extractor),
      createBehavior: (ctx) => entity(ctx.entityId, ctx) as Behavior<unknown>,
    }) as ActorRef<In>;
  }

  /** Classic form: a region on this node that routes to `typeName` but never hosts entities. */
  startProxy<In>(options: ShardingProxyOptions<In>): ActorRef<In> {
    return this.startType({
      typeName: checkTypeName(options.typeName),
      role: options.role,
      coordinatorRole: options.coordinatorRole,
      routing: extractorRouting(options.extractor),
      createBehavior: undefined,
      proxyOnly: true,
    }) as ActorRef<In>;
  }

  /** Entity types started on this node; `hosting`: only those whose entities can run here. */
  typeNames(options: { hosting?: boolean } = {}): readonly string[] {
    return [...this.types]
      .filter(([, t]) => options.hosting !== true || t.spec.createBehavior !== undefined)
      .map(([name]) => name);
  }

  /** The region of `typeName` started on this node (by init, start or startProxy). */
  shardRegion<In = unknown>(typeName: string): ActorRef<In> {
    return this.entry({ name: typeName }).region as ActorRef<In>;
  }

  /**
   * @internal Adds a node-wide observer of shard and entity starts and stops (metrics and
   * the dashboard, docs/observability.md); it sees the types started after this call.
   */
  addLifecycleObserver(listener: ShardingLifecycleListener): void {
    this.observers.push(listener);
  }

  private startType(input: ShardingTypeInput): ActorRef<unknown> {
    const existing = this.types.get(input.typeName);
    if (existing !== undefined) return existing.region;
    const clock = this.host.system.core.clock;
    const lifecycle = combineLifecycles([
      ...(input.lifecycle === undefined ? [] : [input.lifecycle]),
      ...this.observers,
    ]);
    // the node-wide shard lease setting (ClusterNodeOptions.shardLeases) unless the type sets one
    const nodeLeases = (this.host as { readonly shardLeases?: ShardLeaseOption }).shardLeases;
    const lease = input.lease ?? nodeLeases;
    const spec = resolveShardingTypeSpec(
      lifecycle === input.lifecycle && lease === input.lease
        ? input
        : { ...input, lifecycle, ...(lease === undefined ? {} : { lease }) },
      this.host.cluster,
      () => clock.now(),
    );
    const started = startShardingType(this.host, spec);
    this.types.set(spec.typeName, started);
    return started.region;
  }

  private entry(typeKey: { readonly name: string }): StartedShardingType {
    const entry = this.types.get(typeKey.name);
    if (entry === undefined) throw new ShardingTypeNotStartedError(typeKey.name);
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
      (replyTo: ActorRef<RegionState>) => ({
        type: "shardkit.region.get-state",
        timeoutMs,
        replyTo,
      }),
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
      (replyTo: ActorRef<readonly string[]>) => ({
        type: "shardkit.get-regions",
        replyTo,
      }),
      { timeoutMs: options.timeoutMs ?? QUERY_TIMEOUT_MS_DEFAULT },
    );
  }

  /**
   * The hand-offs in progress at the coordinator of `typeKey` (rebalances and graceful
   * shutdowns): which shard, from which region, in which phase, since when.
   */
  async getShardHandOffs(
    typeKey: EntityTypeKey<unknown>,
    options: { timeoutMs?: number } = {},
  ): Promise<readonly ShardHandOff[]> {
    return await ask(
      this.entry(typeKey).coordinator,
      (replyTo: ActorRef<readonly ShardHandOff[]>) => ({
        type: "shardkit.get-hand-offs",
        replyTo,
      }),
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
    const shardId = entry.spec.routing.shardOf(entityId);
    const home = await ask(
      entry.region as ActorRef<RegionControl>,
      (replyTo: ActorRef<{ readonly region: string | null }>) => ({
        type: "shardkit.region.get-home",
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
        new InvalidAddressError(region, "not a region id (node address and actor path)"),
      );
    const ref = this.host.remoting.actorRefFor<RegionControl>(p.node, p.path);
    return ask(
      ref,
      (replyTo: ActorRef<RegionState>) => ({
        type: "shardkit.region.get-state",
        timeoutMs,
        replyTo,
      }),
      {
        timeoutMs: timeoutMs * 2,
      },
    );
  }

  /** A ref to the entity `entityId` of `typeKey` (init the type on this node first). */
  entityRefFor<M>(typeKey: EntityTypeKey<M>, entityId: string): EntityRef<M> {
    const ref = this.unvalidatedRefFor(typeKey, entityId);
    return typeKey.schema !== undefined && typeKey.validateLocal !== false
      ? validatingRef(typeKey, ref)
      : ref;
  }

  private unvalidatedRefFor<M>(typeKey: EntityTypeKey<M>, entityId: string): EntityRef<M> {
    const entry = this.entry(typeKey as EntityTypeKey<unknown>);
    // The region would route the envelope to exactly this shard: compute it once.
    const { routing } = entry.spec;
    if (routing.preRouted)
      return new PreRoutedEntityRef(
        typeKey.name,
        entityId,
        routing.shardOf(entityId),
        entry.region,
        entry.tracing,
      );
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

/**
 * An EntityRef of an `init` type: tells its region EntityEnvelopes (the shard id computed
 * once per ref, not per message). tell and ask
 * are own properties (a ref may be spread, or its tell passed around), assigned in the
 * constructor so that a keepNames transpiler (tsx) does not rename them per ref.
 */
class PreRoutedEntityRef<M> implements EntityRef<M> {
  readonly typeName: string;
  readonly entityId: string;
  readonly tell: (message: M) => void;
  readonly ask: <R>(makeMessage: (replyTo: ActorRef<R>) => M, options?: AskOptions) => Promise<R>;

  constructor(
    typeName: string,
    entityId: string,
    shardId: string,
    region: ActorRef<unknown>,
    tracing: Tracing | undefined,
  ) {
    this.typeName = typeName;
    this.entityId = entityId;
    if (tracing !== undefined) {
      const traced = new TracedSends<M>(shardId, entityId, region, tracing, typeName);
      // outside a span exactly the untraced send, after one look at the active context
      this.tell = (message) => {
        const parent = tracing.active();
        if (parent === undefined || isStartEntity(message))
          region.tell(new EntityEnvelope(shardId, entityId, message));
        else traced.tell(message, parent);
      };
      this.ask = (makeMessage, options) => traced.ask(makeMessage, options);
      return;
    }
    this.tell = (message) => region.tell(new EntityEnvelope(shardId, entityId, message));
    // ask() with the envelope built here: no closure per ask around makeMessage
    this.ask = <R>(makeMessage: (replyTo: ActorRef<R>) => M, options: AskOptions = {}) => {
      const begun = beginAsk<R>(region, options);
      if (begun instanceof Promise) return begun;
      let message: M;
      try {
        message = makeMessage(begun.ref as ActorRef<R>);
      } catch (error) {
        begun.ref.fail(error);
        return begun.promise;
      }
      region.tell(new EntityEnvelope(shardId, entityId, message));
      return begun.promise;
    };
  }
}

/**
 * tell and ask of a traced type: when the caller runs inside a span, the message travels
 * as a TracedMessage in a `shardkit.entity.tell` / `shardkit.entity.ask` span (the ask's
 * ends when it is answered or fails); otherwise exactly the untraced send, after one
 * look at the active context (the ref's own `tell` makes that look itself). One per ref.
 */
class TracedSends<M> {
  private readonly attributes: TraceAttributes;

  constructor(
    private readonly shardId: string,
    private readonly entityId: string,
    private readonly region: ActorRef<unknown>,
    private readonly tracing: Tracing,
    typeName: string,
  ) {
    this.attributes = entityAttributes(typeName, shardId, entityId);
  }

  private traced(message: unknown, context: TraceContext): EntityEnvelope {
    return new EntityEnvelope(
      this.shardId,
      this.entityId,
      new TracedMessage(message, context, this.tracing, this.attributes),
      true,
    );
  }

  /** A tell inside the span of `parent` (the caller's active context). */
  tell(message: M, parent: TraceContext): void {
    const { tracing, region } = this;
    const span = tracing.start(SpanNames.TELL, TraceSpanKind.PRODUCER, parent, this.attributes);
    try {
      region.tell(this.traced(message, span.context));
    } finally {
      span.end();
    }
  }

  ask<R>(makeMessage: (replyTo: ActorRef<R>) => M, options?: AskOptions): Promise<R> {
    const { tracing, shardId, entityId } = this;
    const region = this.region as ActorRef<EntityEnvelope>;
    const parent = tracing.active();
    if (parent === undefined)
      return ask(
        region,
        (replyTo: ActorRef<R>) => new EntityEnvelope(shardId, entityId, makeMessage(replyTo)),
        options,
      );
    const span = tracing.start(SpanNames.ASK, TraceSpanKind.CLIENT, parent, this.attributes);
    return ask(
      region,
      (replyTo: ActorRef<R>) => this.traced(makeMessage(replyTo), span.context),
      options,
    ).then(
      (reply) => {
        span.end();
        return reply;
      },
      (error: unknown) => {
        span.fail(error);
        span.end();
        throw error;
      },
    );
  }
}

/** Routing of the classic style: the extractor names entity, shard and entity message. */
function extractorRouting<In>(extractor: MessageExtractor<In, unknown>): ShardingRouting {
  return {
    preRouted: false,
    shardOf: (entityId) => extractor.shardId(StartEntity(entityId)),
    route: (m) => {
      try {
        const msg = m as In | StartEntity;
        const entityId = extractor.entityId(msg);
        const shardId = extractor.shardId(msg);
        if (typeof entityId !== "string" || typeof shardId !== "string") return undefined;
        const message = isStartEntity(m) ? m : extractor.entityMessage(m as In);
        return new EntityEnvelope(shardId, entityId, message);
      } catch {
        return undefined; // not a message of this type: unhandled
      }
    },
  };
}

function checkTypeName(name: string): string {
  return EntityTypeKey<unknown>(name).name;
}

/**
 * One listener calling each of `listeners` in order (undefined for none); what one throws
 * does not keep the others from being told (sharding-lifecycle.ts swallows it too).
 */
function combineLifecycles(
  listeners: readonly ShardingLifecycleListener[],
): ShardingLifecycleListener | undefined {
  if (listeners.length <= 1) return listeners[0];
  const each = (f: (l: ShardingLifecycleListener) => void) => {
    for (const l of listeners)
      try {
        f(l);
      } catch {
        // a listener must not break sharding nor the other listeners
      }
  };
  return {
    shardStarted: (t, s, n) => each((l) => l.shardStarted?.(t, s, n)),
    shardStopped: (t, s, n) => each((l) => l.shardStopped?.(t, s, n)),
    entityStarted: (t, e, n, s) => each((l) => l.entityStarted?.(t, e, n, s)),
    entityStopped: (t, e, n, s) => each((l) => l.entityStopped?.(t, e, n, s)),
    entityPassivated: (t, e, n, s, r) => each((l) => l.entityPassivated?.(t, e, n, s, r)),
    regionStarted: (t, n, p) => each((l) => l.regionStarted?.(t, n, p)),
    regionStopped: (t, n, p) => each((l) => l.regionStopped?.(t, n, p)),
    shardHomeReceived: (t, s, n, ms) => each((l) => l.shardHomeReceived?.(t, s, n, ms)),
    handOffCompleted: (t, s, n, r, ms) => each((l) => l.handOffCompleted?.(t, s, n, r, ms)),
    handOffTimedOut: (t, s, n, r) => each((l) => l.handOffTimedOut?.(t, s, n, r)),
    handOffAbandoned: (t, s, n, r, c) => each((l) => l.handOffAbandoned?.(t, s, n, r, c)),
  };
}
