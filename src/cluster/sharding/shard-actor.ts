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

/** What an entity's behavior factory gets. */
export interface EntityContext {
  readonly entityId: string;
  readonly shardId: string;
  /** Ask the shard to stop this entity (messages sent meanwhile go to a new incarnation). */
  passivate(stopMessage?: unknown): void;
}

export type ShardCommand =
  | {
      readonly sk: "shard";
      readonly t: "deliver";
      readonly entityId: string;
      readonly message: unknown;
    }
  | { readonly sk: "shard"; readonly t: "hand-off" }
  | { readonly sk: "shard"; readonly t: "shutdown" }
  | {
      readonly sk: "shard";
      readonly t: "passivate";
      readonly entityId: string;
      readonly stopMessage?: unknown;
    }
  | { readonly sk: "shard"; readonly t: "timer"; readonly key: string }
  | { readonly sk: "shard"; readonly t: "stop" }
  | { readonly sk: "shard"; readonly t: "entities"; readonly replyTo: ActorRef<readonly string[]> };

/** What a shard tells its region. */
export type ShardReport =
  | {
      readonly sk: "shard-report";
      readonly t: "returned";
      readonly shard: string;
      readonly messages: readonly { entityId: string; message: unknown }[];
    }
  | { readonly sk: "shard-report"; readonly t: "stopped"; readonly shard: string }
  | { readonly sk: "shard-report"; readonly t: "started"; readonly shard: string };

export interface ShardActorOptions {
  readonly shardId: string;
  readonly region: ActorRef<ShardReport>;
  readonly createBehavior: (ctx: EntityContext) => Behavior<unknown>;
  readonly handOffStopMessage?: unknown;
  readonly settings?: Partial<ShardSettings>;
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
    const perform = (outs: readonly ShardOutput<unknown>[]) => {
      for (const o of outs) performOne(ctx, options, o, feed, entities);
    };
    const feed = (input: ShardInput<unknown>) => perform(machine.handle(input, ctx.now()));
    return Behaviors.receive<ShardCommand>(
      (_c, m) => {
        switch (m.t) {
          case "deliver":
            // StartEntity starts the entity without a message for it.
            if ((m.message as { type?: unknown } | null)?.type === "shardkit.StartEntity")
              feed({ type: "start-entity", entityId: m.entityId });
            // Fast path: the machine records the delivery to an active entity; we send it.
            else if (machine.deliverToActive(m.entityId, ctx.now()))
              entities.tell(m.entityId, m.message);
            else feed({ type: "deliver", entityId: m.entityId, message: m.message });
            return;
          case "hand-off":
            feed({ type: "hand-off", stopMessage: options.handOffStopMessage });
            return;
          case "shutdown":
            feed({ type: "shutdown" });
            return Behaviors.stopped;
          case "passivate":
            feed({ type: "passivate", entityId: m.entityId, stopMessage: m.stopMessage });
            return;
          case "timer":
            feed({ type: "timer", key: m.key });
            return;
          case "stop":
            return Behaviors.stopped;
          case "entities":
            m.replyTo.tell(machine.liveEntityIds());
            return;
        }
      },
      (_c, signal) => {
        if (signal.type === "Terminated" || signal.type === "ChildFailed") {
          const entityId = entityIdOf(signal.ref.path.name);
          feed({
            type: "entity-terminated",
            entityId,
            passivated: false,
            failed: signal.type === "ChildFailed",
          });
        }
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
      shard.tell({ sk: "shard", t: "passivate", entityId, stopMessage });
  }
}

function performOne(
  ctx: ActorContext<ShardCommand>,
  options: ShardActorOptions,
  o: ShardOutput<unknown>,
  feed: (input: ShardInput<unknown>) => void,
  entities: EntityChildren,
): void {
  switch (o.type) {
    case "start-entity-actor": {
      const entityId = o.entityId;
      const entityCtx = new ShardEntityContext(entityId, options.shardId, ctx.self);
      const ref = ctx.spawn(options.createBehavior(entityCtx), childName(entityId));
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
        sk: "shard-report",
        t: "returned",
        shard: options.shardId,
        messages: o.messages,
      });
      return;
    case "write-remember":
      return; // remember-entities stores are wired with the persistence issue
    case "start-timer":
      ctx.timers.startSingleTimer(o.key, { sk: "shard", t: "timer", key: o.key }, o.delayMs);
      return;
    case "cancel-timer":
      ctx.timers.cancel(o.key);
      return;
    case "shard-stopped":
      options.region.tell({ sk: "shard-report", t: "stopped", shard: options.shardId });
      ctx.self.tell({ sk: "shard", t: "stop" });
      return;
    case "log":
      ctx.log[o.level](o.text, { shard: options.shardId });
      return;
  }
}
