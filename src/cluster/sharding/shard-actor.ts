/**
 * The shard actor: drives one ShardMachine (core/shard) and owns the shard's entity
 * actors as children (named by the URI-encoded entity id). It reports to its region
 * (the parent) when hand-off leftovers go back and when the shard has stopped.
 */
import type { ActorContext } from "../../actor/actor-context.js";
import type { ActorRef } from "../../actor/actor-ref.js";
import { type Behavior, Behaviors } from "../../actor/behavior.js";
import { ShardMachine } from "../../core/shard/shard-machine.js";
import type { ShardSettings } from "../../core/shard/shard-settings.js";
import type { ShardInput, ShardOutput } from "../../core/shard/shard-types.js";
import type { RememberEntitiesStore } from "../../ports/remember-entities-store.js";
import {
  ENTITY_ENVELOPE,
  isStartEntity,
  type ShardCommand,
  type ShardRememberResult,
  type ShardReport,
  StartEntity,
} from "../../protocol/sharding.js";
import type { ShardLifecycle } from "./sharding-lifecycle.js";

/** What an entity's behavior factory gets. */
export interface EntityContext {
  readonly entityId: string;
  readonly shardId: string;
  /** Ask the shard to stop this entity (messages sent meanwhile go to a new incarnation). */
  passivate(stopMessage?: unknown): void;
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
    const machine = new ShardMachine<unknown>({
      shardId: options.shardId,
      settings: options.settings,
    });
    const entities = new EntityChildren(ctx);
    // Live entity ids for the lifecycle listener only (none kept without a listener).
    const reported = options.lifecycle === undefined ? undefined : new Set<string>();
    options.lifecycle?.shardStarted(options.shardId);
    const perform = (outs: readonly ShardOutput<unknown>[]) => {
      for (const o of outs) performOne(ctx, options, o, feed, entities, reported);
    };
    const feed = (input: ShardInput<unknown>) => perform(machine.handle(input, ctx.now()));
    const remember = options.settings.rememberEntities ? options.remember : undefined;
    if (remember !== undefined) loadRemembered(ctx, options, remember);
    return Behaviors.receive<ShardCommand>(
      (_c, m) => {
        switch (m.type) {
          case ENTITY_ENVELOPE:
            // StartEntity starts the entity without a message for it.
            if (isStartEntity(m.message)) feed({ type: "start-entity", entityId: m.entityId });
            // Fast path: the machine's delivery decision, taken without `handle`.
            else if (machine.deliverToActive(m.entityId, ctx.now()))
              entities.tell(m.entityId, m.message);
            else feed({ type: "deliver", entityId: m.entityId, message: m.message });
            return;
          case "shardkit.shard.hand-off":
            feed({ type: "hand-off", stopMessage: options.handOffStopMessage });
            return;
          case "shardkit.shard.shutdown":
            feed({ type: "shutdown" });
            return Behaviors.stopped;
          case "shardkit.shard.passivate":
            feed({ type: "passivate", entityId: m.entityId, stopMessage: m.stopMessage });
            return;
          case "shardkit.shard.timer":
            feed({ type: "timer", key: m.key });
            return;
          case "shardkit.shard.stop":
            return Behaviors.stopped;
          case "shardkit.shard.entities":
            m.replyTo.tell(machine.liveEntityIds());
            return;
          case "shardkit.shard.set-active-limit":
            feed({ type: "set-active-limit", limit: m.limit });
            return;
          default:
            if (remember !== undefined) onRemember(ctx, options, remember, m, feed);
            return;
        }
      },
      (_c, signal) => {
        if (signal.type === "Terminated" || signal.type === "ChildFailed") {
          const entityId = entityIdOf(signal.ref.path.name);
          // Child names are reserved until Terminated: this is the current incarnation.
          if (reported?.delete(entityId))
            options.lifecycle?.entityStopped(entityId, options.shardId);
          feed({
            type: "entity-terminated",
            entityId,
            passivated: false,
            failed: signal.type === "ChildFailed",
          });
        }
        if (signal.type === "PostStop")
          options.lifecycle?.shardStopped(options.shardId, reported ?? []);
        return undefined;
      },
    );
  });
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

  constructor(entityId: string, shardId: string, shard: ActorRef<ShardCommand>) {
    this.entityId = entityId;
    this.shardId = shardId;
    this.passivate = (stopMessage) =>
      shard.tell({ type: "shardkit.shard.passivate", entityId, stopMessage });
  }
}

function performOne(
  ctx: ActorContext<ShardCommand>,
  options: ShardActorOptions,
  o: ShardOutput<unknown>,
  feed: (input: ShardInput<unknown>) => void,
  entities: EntityChildren,
  reported: Set<string> | undefined,
): void {
  switch (o.type) {
    case "start-entity-actor": {
      const entityId = o.entityId;
      const entityCtx = new ShardEntityContext(entityId, options.shardId, ctx.self);
      const ref = ctx.spawn(options.createBehavior(entityCtx), childName(entityId));
      if (reported !== undefined) {
        reported.add(entityId);
        options.lifecycle?.entityStarted(entityId, options.shardId);
      }
      ctx.watch(ref as ActorRef<never>);
      feed({ type: "entity-started", entityId });
      return;
    }
    case "send-to-entity":
      entities.tell(o.entityId, o.message);
      return;
    case "stop-entity-actor": {
      if (o.stopMessage !== undefined) {
        entities.tell(o.entityId, o.stopMessage);
        return;
      }
      const c = entities.get(o.entityId);
      if (c !== undefined) ctx.stop(c as ActorRef<never>);
      return;
    }
    case "force-stop-entity-actor": {
      const c = entities.get(o.entityId);
      if (c !== undefined) ctx.stop(c as ActorRef<never>);
      return;
    }
    case "buffer-overflow":
      ctx.system.core.deadLetter(o.message, ctx.self.path.toString(), "buffer-overflow");
      return;
    case "return-to-region":
      options.region.tell({
        type: "shardkit.shard-returned",
        shard: options.shardId,
        messages: o.messages,
      });
      return;
    case "write-remember": {
      const { batchId } = o;
      const store = options.remember?.store;
      if (store === undefined) return; // remember-entities is off: the machine never asks
      store.update(options.remember?.typeName ?? "", options.shardId, o.batch).then(
        () => ctx.self.tell({ type: "shardkit.shard.remember-written", batchId }),
        (error: unknown) =>
          ctx.self.tell({ type: "shardkit.shard.remember-write-failed", batchId, error }),
      );
      return;
    }
    case "start-timer":
      ctx.timers.startSingleTimer(o.key, { type: "shardkit.shard.timer", key: o.key }, o.delayMs);
      return;
    case "cancel-timer":
      ctx.timers.cancel(o.key);
      return;
    case "shard-stopped":
      options.region.tell({ type: "shardkit.shard-stopped", shard: options.shardId });
      ctx.self.tell({ type: "shardkit.shard.stop" });
      return;
    case "log":
      ctx.log[o.level](o.text, { shard: options.shardId });
      return;
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

function onRemember(
  ctx: ActorContext<ShardCommand>,
  options: ShardActorOptions,
  r: ShardRememberOptions,
  m: ShardRememberResult,
  feed: (input: ShardInput<unknown>) => void,
): void {
  switch (m.type) {
    case "shardkit.shard.remember-loaded":
      feed({ type: "recovered-entities", entityIds: m.entityIds });
      return;
    case "shardkit.shard.remember-load-failed": {
      const retryMs = options.settings.rememberWriteRetryBackoffMs;
      ctx.log.warn("loading remembered entities failed; retrying", {
        shard: options.shardId,
        retryInMs: retryMs,
        error: String(m.error),
      });
      ctx.timers.startSingleTimer(
        "remember-load-retry",
        { type: "shardkit.shard.remember-load-retry" },
        retryMs,
      );
      return;
    }
    case "shardkit.shard.remember-load-retry":
      loadRemembered(ctx, options, r);
      return;
    case "shardkit.shard.remember-written":
      feed({ type: "remember-store-ack", batchId: m.batchId });
      return;
    case "shardkit.shard.remember-write-failed":
      ctx.log.warn("writing remembered entities failed", {
        shard: options.shardId,
        error: String(m.error),
      });
      feed({ type: "remember-store-failed", batchId: m.batchId });
      return;
  }
}
