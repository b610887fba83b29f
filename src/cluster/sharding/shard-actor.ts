/**
 * The shard actor: drives one ShardMachine (core/shard) and owns the shard's entity
 * actors as children (named by the URI-encoded entity id). It reports to its region
 * (the parent) when hand-off leftovers go back and when the shard has stopped.
 */
import type { ActorContext } from "../../actor/actor-context.js";
import { type ActorRef, PoisonPill } from "../../actor/actor-ref.js";
import { type Behavior, Behaviors } from "../../actor/behavior.js";
import {
  dispatch,
  type Handlers,
  logOutput,
  MachineDriver,
  type Performers,
  persistThenAck,
  timerPerformers,
} from "../../actor/machine-driver.js";
import {
  ShardLeaseMachine,
  type ShardLeaseOutput,
  type ShardLeaseSettings,
} from "../../core/shard/shard-lease-machine.js";
import { ShardMachine } from "../../core/shard/shard-machine.js";
import type { ShardSettings } from "../../core/shard/shard-settings.js";
import type { ShardInput, ShardOutput } from "../../core/shard/shard-types.js";
import { FencedWriteError, type Journal, type WriteFence } from "../../ports/journal.js";
import type { LeaseStore } from "../../ports/lease.js";
import type { RememberEntitiesStore } from "../../ports/remember-entities-store.js";
import {
  EntityEnvelope,
  isStartEntity,
  type ShardCommand,
  type ShardReport,
  StartEntity,
} from "../../protocol/sharding.js";
import type { ShardLifecycle, ShardProbe } from "./sharding-lifecycle.js";
import { SpanAttributes, SpanNames, type TracedMessage } from "./traced-message.js";

/** What an entity's behavior factory gets. */
export interface EntityContext {
  readonly entityId: string;
  readonly shardId: string;
  /** Ask the shard to stop this entity (messages sent meanwhile go to a new incarnation). */
  passivate(stopMessage?: unknown): void;
  /**
   * With shard leases: the fence of the shard's lease (key `<type>/<shardId>`, the
   * lease's fencing token). Pass it to EventSourcedBehavior (`fence: ctx.fence`) so the
   * journal refuses the entity's writes once another node holds the shard. Undefined
   * without leases.
   */
  readonly fence: WriteFence | undefined;
}

export type { ShardCommand, ShardReport };

export interface ShardActorOptions {
  readonly shardId: string;
  readonly region: ActorRef<ShardReport>;
  readonly createBehavior: (ctx: EntityContext) => Behavior<unknown>;
  readonly handOffStopMessage?: unknown;
  /** Resolved (ShardingTypeSpec). */
  readonly settings: Readonly<ShardSettings>;
  /** Remember entities (used when settings.rememberEntities is on). */
  readonly remember?: ShardRememberOptions;
  /** Start/stop reports of the shard and its entities (the testing oracle). */
  readonly lifecycle?: ShardLifecycle;
  /**
   * The region's set of shard probes (with a lifecycle listener: the metrics): the shard
   * adds its probe when it starts and removes it when it stops; the region's RegionProbe
   * reads them when scraped.
   */
  readonly probes?: Set<ShardProbe>;
  /** Shard leases: no entity starts before the lease `<type>/<shardId>` is held. */
  readonly lease?: ShardLeaseOptions;
}

/** A shard's lease (docs/sharding.md, "Leases and fencing"). */
export interface ShardLeaseOptions {
  readonly store: LeaseStore;
  readonly settings: Readonly<ShardLeaseSettings>;
  /** The lease name and fence key: `<type>/<shardId>`. */
  readonly name: string;
  /** This member (the owner is this member plus the shard actor's incarnation). */
  readonly member: string;
  /** Journals whose fence is advanced to the new token before any entity starts. */
  readonly journals: readonly Journal[];
}

/** Where a remembering shard keeps its entities. */
export interface ShardRememberOptions {
  readonly typeName: string;
  readonly store: RememberEntitiesStore;
  /**
   * The shard an entity id belongs to now. A remembered entity whose shard changed (the
   * shard extractor changed between two runs) is started through the region, which
   * routes it to its new shard, and then forgotten here.
   */
  readonly shardOf: (entityId: string) => string;
}

/**
 * Entity ids that are valid actor names as they are (see validActorName: not empty, no
 * '/', '#' or whitespace, not starting with '$') and do not start with '%'.
 */
const PLAIN_ID = /^[^$%/#\s][^/#\s]*$/;

/**
 * The entity's child actor name: the id itself when it is plain (no string to allocate
 * and keep per entity), else "%" + its URI encoding (a plain id never starts with "%", so
 * names stay unambiguous; the empty id is "%").
 */
const childName = (entityId: string) =>
  PLAIN_ID.test(entityId) ? entityId : `%${encodeURIComponent(entityId)}`;
const entityIdOf = (name: string) =>
  name.charCodeAt(0) === 37 /* % */ ? decodeURIComponent(name.slice(1)) : name;

export function shardBehavior(options: ShardActorOptions): Behavior<ShardCommand> {
  return Behaviors.setup<ShardCommand>((ctx) => {
    const shard = new ShardDriver(ctx, options);
    return Behaviors.receive<ShardCommand>(
      (_c, m) => (shard.receive(m) ? Behaviors.stopped : undefined),
      (_c, signal) => {
        if (signal.type === "Terminated" || signal.type === "ChildFailed")
          shard.onEntityTerminated(signal.ref.path.name, signal.type === "ChildFailed");
        if (signal.type === "PostStop") shard.onStopped();
        else if (signal.type === "PreRestart") shard.removeProbe();
        return undefined;
      },
    );
  });
}

type ShardControl = Exclude<ShardCommand, EntityEnvelope>;

/**
 * The driver of one ShardMachine (machine-driver.ts): envelopes take the fast path of the
 * machine's delivery decision; control messages go through `handlers`, outputs through
 * `performers` (one entry per type each).
 */
class ShardDriver {
  private readonly machine: ShardMachine<unknown>;
  private readonly driver: MachineDriver<ShardInput<unknown>, ShardOutput<unknown>>;
  private readonly entities: EntityChildren;
  /** Live entity ids for the lifecycle listener only (none kept without a listener). */
  private readonly reported: Set<string> | undefined;
  private readonly remember: ShardRememberOptions | undefined;
  private readonly handlers: Handlers<ShardControl>;
  /** Set by a control message after which the actor stops. */
  private stopNow = false;
  private readonly lease: ShardLeaseDriver | undefined;
  /** The fence of the held lease (undefined: no leases, or not yet granted). */
  private fence: WriteFence | undefined;
  /** shardStarted was reported to the lifecycle listener (with a lease: once granted). */
  private startedReported = false;
  /** In the region's probe set while the shard runs (options.probes). */
  private readonly probe: ShardProbe | undefined;

  constructor(
    private readonly ctx: ActorContext<ShardCommand>,
    private readonly options: ShardActorOptions,
  ) {
    this.machine = new ShardMachine<unknown>({
      shardId: options.shardId,
      settings: options.settings,
      leaseRequired: options.lease !== undefined,
    });
    this.driver = new MachineDriver(this.machine, () => ctx.now(), this.performers());
    this.handlers = this.controlHandlers();
    this.entities = new EntityChildren(ctx);
    if (options.probes !== undefined) {
      const machine = this.machine;
      this.probe = {
        get bufferedMessages() {
          return machine.bufferedMessages;
        },
      };
      options.probes.add(this.probe);
    }
    this.reported = options.lifecycle === undefined ? undefined : new Set<string>();
    // with a lease, the shard is live (for the lifecycle listener) only once it holds it
    if (options.lease === undefined) this.reportStarted();
    this.remember = options.settings.rememberEntities ? options.remember : undefined;
    this.lease =
      options.lease === undefined
        ? undefined
        : new ShardLeaseDriver(ctx, options.lease, (o) => this.onLeaseOutput(o));
    if (this.lease !== undefined) this.lease.start();
    else if (this.remember !== undefined) loadRemembered(ctx, options, this.remember);
  }

  private reportStarted(): void {
    this.startedReported = true;
    this.options.lifecycle?.shardStarted(this.options.shardId);
  }

  /** The lease machine's decisions that concern the shard (the rest is lease I/O). */
  private onLeaseOutput(o: ShardLeaseOutput): void {
    const lease = this.options.lease as ShardLeaseOptions;
    if (o.type === "granted") {
      // refused by the journal once this shard's own lease deadline passed, even before
      // its timer fires (a paused process that resumed)
      this.fence = {
        key: lease.name,
        token: o.token,
        expired: () => this.lease?.expired() !== false,
      };
      this.reportStarted();
      this.driver.feed({ type: "lease-granted" });
      if (this.remember !== undefined) loadRemembered(this.ctx, this.options, this.remember);
    } else if (o.type === "lost") {
      this.fence = undefined;
      this.driver.feed({ type: "lease-lost" });
    }
  }

  /** Handles one command; true when the actor must stop now. */
  receive(m: ShardCommand): boolean {
    if (m instanceof EntityEnvelope) {
      if (m.traced) {
        this.deliverTraced(m, m.message as TracedMessage);
        return false;
      }
      // StartEntity starts the entity without a message for it.
      if (isStartEntity(m.message))
        this.driver.feed({ type: "start-entity", entityId: m.entityId });
      // Fast path: the machine's delivery decision, taken without `handle`.
      else if (this.machine.deliverToActive(m.entityId, this.ctx.now()))
        this.entities.tell(m.entityId, m.message);
      else this.driver.feed({ type: "deliver", entityId: m.entityId, message: m.message });
      return false;
    }
    dispatch(this.handlers, m);
    return this.stopNow;
  }

  /**
   * An entity message in a `shardkit.shard.deliver` span; the entity's handler span
   * follows in the entity's cell (traced-message.ts).
   */
  private deliverTraced(m: EntityEnvelope, message: TracedMessage): void {
    const span = message.enter(SpanNames.SHARD);
    try {
      if (this.machine.deliverToActive(m.entityId, this.ctx.now())) {
        span.setAttribute(SpanAttributes.DELIVERY, "active");
        this.entities.tell(m.entityId, message);
      } else {
        span.setAttribute(SpanAttributes.DELIVERY, "start");
        this.driver.feed({ type: "deliver", entityId: m.entityId, message });
      }
    } finally {
      span.end();
    }
  }

  onEntityTerminated(childName: string, failed: boolean): void {
    const entityId = entityIdOf(childName);
    // Child names are reserved until Terminated: this is the current incarnation.
    if (this.reported?.delete(entityId))
      this.options.lifecycle?.entityStopped(entityId, this.options.shardId);
    this.driver.feed({ type: "entity-terminated", entityId, passivated: false, failed });
  }

  /** Takes the shard's probe out of the region's set (it stops or restarts). */
  removeProbe(): void {
    if (this.probe !== undefined) this.options.probes?.delete(this.probe);
  }

  onStopped(): void {
    this.removeProbe();
    this.lease?.release();
    if (this.startedReported)
      this.options.lifecycle?.shardStopped(this.options.shardId, this.reported ?? []);
  }

  private controlHandlers(): Handlers<ShardControl> {
    const { options } = this;
    const feed = (input: ShardInput<unknown>) => this.driver.feed(input);
    const remembering = (f: (r: ShardRememberOptions) => void) => () => {
      if (this.remember !== undefined) f(this.remember);
    };
    return {
      "shardkit.shard.hand-off": () =>
        feed({ type: "hand-off", stopMessage: options.handOffStopMessage }),
      "shardkit.shard.shutdown": () => {
        feed({ type: "shutdown" });
        this.stopNow = true;
      },
      "shardkit.shard.passivate": (m) =>
        feed({ type: "passivate", entityId: m.entityId, stopMessage: m.stopMessage }),
      "shardkit.shard.timer": (m) =>
        this.lease?.ownsTimer(m.key)
          ? this.lease.feed({ type: "timer", key: m.key })
          : feed({ type: "timer", key: m.key }),
      "shardkit.shard.lease-result": (m) =>
        this.lease?.feed({
          type: "acquire-result",
          sentAtMs: m.sentAtMs,
          token: m.token,
          ...(m.error === undefined ? {} : { error: m.error }),
        }),
      "shardkit.shard.stop": () => {
        this.stopNow = true;
      },
      "shardkit.shard.entities": (m) => m.replyTo.tell(this.machine.liveEntityIds()),
      "shardkit.shard.set-active-limit": (m) => feed({ type: "set-active-limit", limit: m.limit }),
      "shardkit.shard.remember-loaded": (m) =>
        remembering(() => feed({ type: "recovered-entities", entityIds: m.entityIds }))(),
      "shardkit.shard.remember-load-failed": (m) => remembering(() => this.retryLoad(m.error))(),
      "shardkit.shard.remember-load-retry": remembering((r) =>
        loadRemembered(this.ctx, options, r),
      ),
      "shardkit.shard.remember-written": (m) =>
        remembering(() => feed({ type: "remember-store-ack", batchId: m.batchId }))(),
      "shardkit.shard.remember-write-failed": (m) =>
        remembering(() => {
          this.ctx.log.warn("writing remembered entities failed", {
            shard: options.shardId,
            error: String(m.error),
          });
          feed({ type: "remember-store-failed", batchId: m.batchId });
        })(),
    };
  }

  private retryLoad(error: unknown): void {
    const retryMs = this.options.settings.rememberWriteRetryBackoffMs;
    this.ctx.log.warn("loading remembered entities failed; retrying", {
      shard: this.options.shardId,
      retryInMs: retryMs,
      error: String(error),
    });
    this.ctx.timers.startSingleTimer(
      "remember-load-retry",
      { type: "shardkit.shard.remember-load-retry" },
      retryMs,
    );
  }

  private performers(): Performers<ShardOutput<unknown>> {
    const { ctx, options } = this;
    const stop = (entityId: string) => {
      const c = this.entities.get(entityId);
      if (c !== undefined) ctx.stop(c as ActorRef<never>);
    };
    return {
      "start-entity-actor": (o) => this.startEntity(o.entityId),
      "send-to-entity": (o) => this.entities.tell(o.entityId, o.message),
      // The default stop is a PoisonPill, not ctx.stop: it comes after the messages the
      // entity already has, and an event-sourced entity takes it only once its append in
      // flight ended and the reply went out (event-sourced-behavior.ts, "Stopping").
      "stop-entity-actor": (o) => {
        if (o.reason !== "hand-off")
          options.lifecycle?.entityPassivated(o.entityId, options.shardId, o.reason);
        if (o.stopMessage !== undefined) this.entities.tell(o.entityId, o.stopMessage);
        else this.entities.get(o.entityId)?.tell(PoisonPill);
      },
      "force-stop-entity-actor": (o) => stop(o.entityId),
      "buffer-overflow": (o) =>
        ctx.system.core.deadLetter(o.message, ctx.self.path.toString(), "buffer-overflow"),
      "return-to-region": (o) =>
        options.region.tell({
          type: "shardkit.shard-returned",
          shard: options.shardId,
          messages: o.messages,
        }),
      "write-remember": (o) => this.writeRemember(o.batchId, o.batch),
      ...timerPerformers<ShardCommand>(ctx.timers, (key) => ({
        type: "shardkit.shard.timer",
        key,
      })),
      "shard-stopped": () => {
        options.region.tell({ type: "shardkit.shard-stopped", shard: options.shardId });
        ctx.self.tell({ type: "shardkit.shard.stop" });
      },
      log: (o) => logOutput(ctx.log, o.level, o.text, { shard: options.shardId }),
    };
  }

  private startEntity(entityId: string): void {
    const { ctx, options } = this;
    const entityCtx = new ShardEntityContext(entityId, options.shardId, ctx.self, this.fence);
    const ref = ctx.spawn(options.createBehavior(entityCtx), childName(entityId));
    if (this.reported !== undefined) {
      this.reported.add(entityId);
      options.lifecycle?.entityStarted(entityId, options.shardId);
    }
    ctx.watch(ref as ActorRef<never>);
    this.driver.feed({ type: "entity-started", entityId });
  }

  private writeRemember(
    batchId: number,
    batch: (ShardOutput<unknown> & { type: "write-remember" })["batch"],
  ): void {
    const store = this.options.remember?.store;
    if (store === undefined) return; // remember-entities is off: the machine never asks
    const typeName = this.options.remember?.typeName ?? "";
    persistThenAck<ShardCommand>(
      this.ctx.self,
      () => store.update(typeName, this.options.shardId, batch, this.fence),
      () => ({ type: "shardkit.shard.remember-written", batchId }),
      (error) => ({ type: "shardkit.shard.remember-write-failed", batchId, error }),
    );
  }
}

/**
 * The shard's entity actors by entity id, found among its children (named by childName):
 * no map of its own per entity. A terminated child leaves the children before the shard
 * processes its Terminated signal; a message for it meanwhile goes to dead letters, as a
 * tell to the terminated actor did.
 */
class EntityChildren {
  constructor(private readonly ctx: ActorContext<ShardCommand>) {}

  get(entityId: string): ActorRef<unknown> | undefined {
    // A child named exactly like an id that does not start with "%" is that entity.
    if (entityId.charCodeAt(0) !== 37 /* % */) {
      const c = this.ctx.child(entityId);
      if (c !== undefined) return c;
    }
    return PLAIN_ID.test(entityId) ? undefined : this.ctx.child(childName(entityId));
  }

  tell(entityId: string, message: unknown): void {
    const c = this.get(entityId);
    if (c !== undefined) c.tell(message);
    else
      this.ctx.system.core.deadLetter(
        message,
        `${this.ctx.self.path.toString()}/${childName(entityId)}`,
        "stopped",
      );
  }
}

/**
 * The EntityContext of one entity. Every field is an own property (user code may spread
 * or destructure it); `passivate` is assigned, not declared in an object literal, so a
 * keepNames transpiler (tsx) does not rename it per entity.
 */
class ShardEntityContext implements EntityContext {
  readonly entityId: string;
  readonly shardId: string;
  readonly passivate: (stopMessage?: unknown) => void;
  readonly fence: WriteFence | undefined;

  constructor(
    entityId: string,
    shardId: string,
    shard: ActorRef<ShardCommand>,
    fence: WriteFence | undefined,
  ) {
    this.entityId = entityId;
    this.shardId = shardId;
    this.fence = fence;
    this.passivate = (stopMessage) =>
      shard.tell({ type: "shardkit.shard.passivate", entityId, stopMessage });
  }
}

/**
 * The I/O of a shard's lease: drives a ShardLeaseMachine (core/shard/shard-lease-machine.ts).
 * An acquisition is the store's acquire-or-renew and then, for a new token, advancing the
 * fence of every fenced journal, so that no older holder can write once an entity of this
 * holder may start. Results come back as `shardkit.shard.lease-result` messages; renewals
 * never touch the message path.
 */
class ShardLeaseDriver {
  private readonly machine: ShardLeaseMachine;
  private readonly driver: MachineDriver<
    Parameters<ShardLeaseMachine["handle"]>[0],
    ShardLeaseOutput
  >;
  private readonly owner: string;
  private released = false;

  constructor(
    private readonly ctx: ActorContext<ShardCommand>,
    private readonly lease: ShardLeaseOptions,
    decided: (o: ShardLeaseOutput) => void,
  ) {
    this.machine = new ShardLeaseMachine(lease.settings);
    this.owner = `${lease.member}#${ctx.self.path.uid}`;
    this.driver = new MachineDriver(this.machine, () => ctx.now(), {
      acquire: (o) => this.acquire(o.sentAtMs, o.renewal),
      granted: (o) => decided(o),
      lost: (o) => decided(o),
      release: () => this.releaseInStore(),
      ...timerPerformers<ShardCommand>(ctx.timers, (key) => ({
        type: "shardkit.shard.timer",
        key,
      })),
      log: (o) => logOutput(ctx.log, o.level, o.text, { lease: lease.name }),
    });
  }

  start(): void {
    this.feed({ type: "start" });
  }

  ownsTimer(key: string): boolean {
    return key.startsWith("lease-");
  }

  feed(input: Parameters<ShardLeaseMachine["handle"]>[0]): void {
    if (!this.released) this.driver.feed(input);
  }

  /** False while the lease is held and its deadline has not passed on this node's clock. */
  expired(): boolean {
    const deadline = this.machine.deadlineMs;
    return deadline === undefined || this.ctx.now() >= deadline;
  }

  /** The shard stopped: give the lease up (no timers: the actor is gone). */
  release(): void {
    if (this.released) return;
    this.released = true;
    for (const o of this.machine.handle({ type: "release" }, this.ctx.now()))
      if (o.type === "release") this.releaseInStore();
  }

  private releaseInStore(): void {
    this.lease.store.releaseLease(this.lease.name, this.owner).catch((error: unknown) => {
      this.ctx.log.debug("releasing the shard lease failed (it expires by itself)", {
        lease: this.lease.name,
        error: String(error),
      });
    });
  }

  private acquire(sentAtMs: number, renewal: boolean): void {
    const { store, name, settings, journals } = this.lease;
    const self = this.ctx.self;
    const reply = (token: number | undefined, error?: string) =>
      self.tell({
        type: "shardkit.shard.lease-result",
        sentAtMs,
        token,
        ...(error === undefined ? {} : { error }),
      });
    store
      .acquireLease(name, this.owner, settings.ttlMs)
      .then(async (token) => {
        if (token !== undefined && !renewal)
          for (const j of journals) await j.advanceFence?.({ key: name, token });
        return token;
      })
      .then(
        (token) => reply(token),
        (error: unknown) =>
          // a newer holder's fence: the lease is someone else's (retry later)
          error instanceof FencedWriteError ? reply(undefined) : reply(undefined, String(error)),
      );
  }
}

/** Loads the shard's remembered entities (moving those whose shard changed) and reports. */
function loadRemembered(
  ctx: ActorContext<ShardCommand>,
  options: ShardActorOptions,
  r: ShardRememberOptions,
): void {
  const { shardId } = options;
  r.store
    .getEntities(r.typeName, shardId)
    .then(async (ids) => {
      const moved = ids.filter((id) => r.shardOf(id) !== shardId);
      if (moved.length === 0) return ids;
      // Start them in their new shard first, then forget them here: a crash in between
      // leaves an entity remembered twice (started again, harmlessly), never lost.
      const region = options.region as ActorRef<unknown>;
      for (const entityId of moved) region.tell(StartEntity(entityId));
      await r.store.update(r.typeName, shardId, { started: [], stopped: moved });
      ctx.log.info("remembered entities moved to their new shards", {
        shard: shardId,
        moved: moved.length,
      });
      const stay = new Set(moved);
      return ids.filter((id) => !stay.has(id));
    })
    .then(
      (entityIds) => ctx.self.tell({ type: "shardkit.shard.remember-loaded", entityIds }),
      (error: unknown) => ctx.self.tell({ type: "shardkit.shard.remember-load-failed", error }),
    );
}
