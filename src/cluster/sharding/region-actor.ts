/**
 * The region actor of one entity type on one node: drives a RegionMachine (core/region).
 * It finds the coordinator through the coordinator singleton's proxy, registers, routes
 * messages by shard (locally to its shard children, or to the owning region), and runs
 * the hand-off protocol for its shards.
 */
import type { ActorContext } from "../../actor/actor-context.js";
import type { ActorRef } from "../../actor/actor-ref.js";
import { ask } from "../../actor/ask.js";
import { type Behavior, Behaviors } from "../../actor/behavior.js";
import { RegionMachine } from "../../core/region/region-machine.js";
import { perShardActiveLimit, type RegionSettings } from "../../core/region/region-settings.js";
import type { RegionInput, RegionOutput } from "../../core/region/region-types.js";
import type { ShardSettings } from "../../core/shard/shard-settings.js";
import type { Cluster } from "../membership/cluster.js";
import type { Remoting } from "../remoting/remoting.js";
import {
  type EntityContext,
  type ShardCommand,
  type ShardRememberOptions,
  type ShardReport,
  shardBehavior,
} from "./shard-actor.js";
import type { ShardLifecycle } from "./sharding-lifecycle.js";
import {
  ActorIdRefs,
  actorIdOf,
  EntityDelivery,
  FORWARDED_TAG,
  type ForwardedTuple,
  isForwardedTuple,
  isShardingMsg,
  type ShardingMsg,
  splitActorId,
} from "./sharding-messages.js";

export interface RegionActorOptions {
  readonly typeName: string;
  readonly member: string;
  readonly remoting: Remoting;
  /** The coordinator singleton's proxy (for identification). */
  readonly coordinatorProxy: ActorRef<ShardingMsg>;
  /** Entity id and shard id of a user message (undefined: not for this type). */
  readonly route: (
    message: unknown,
  ) => { entityId: string; shardId: string; message: unknown } | undefined;
  /** undefined = proxy only (never hosts shards). */
  readonly createBehavior?: (ctx: EntityContext) => Behavior<unknown>;
  readonly handOffStopMessage?: unknown;
  readonly settings?: Partial<RegionSettings>;
  readonly shardSettings?: Partial<ShardSettings>;
  /** Remember entities: the store and the current shard function (see shard-actor.ts). */
  readonly remember?: ShardRememberOptions;
  /** Sharding role and coordinator role (for the registration warnings). */
  readonly role?: string;
  readonly coordinatorRole?: string;
  /** Passed to every shard (start/stop reports; the testing oracle). */
  readonly lifecycle?: ShardLifecycle;
  /** Membership: regions on removed members are forgotten (their shards move). */
  readonly cluster: Cluster;
}

/** What a region reports about itself (queries). */
export interface RegionState {
  readonly region: string;
  readonly shards: readonly { readonly shardId: string; readonly entityIds: readonly string[] }[];
}

/** Queries and control messages a region accepts (besides entity messages). */
export type RegionControl =
  | {
      readonly sk: "region";
      readonly t: "get-state";
      readonly timeoutMs: number;
      readonly replyTo: ActorRef<RegionState>;
    }
  | {
      readonly sk: "region";
      readonly t: "get-home";
      readonly shard: string;
      readonly replyTo: ActorRef<{ readonly region: string | null }>;
    }
  | {
      readonly sk: "region";
      readonly t: "graceful-shutdown";
      readonly replyTo: ActorRef<"stopped">;
    }
  | { readonly sk: "region"; readonly t: "self-downed" };

type RegionMsg =
  | ShardingMsg
  | ShardReport
  | RegionControl
  | { readonly sk: "region"; readonly t: "timer"; readonly key: string }
  | { readonly sk: "region"; readonly t: "node-removed"; readonly node: string }
  | { readonly sk: "region"; readonly t: "coordinator-gone"; readonly id: string };

export function regionBehavior(options: RegionActorOptions): Behavior<unknown> {
  return Behaviors.setup<unknown>((ctx) => {
    const selfId = actorIdOf(options.remoting, ctx.self as ActorRef<never>);
    const machine = new RegionMachine<unknown>({
      self: selfId,
      member: options.member,
      typeName: options.typeName,
      proxy: options.createBehavior === undefined,
      role: options.role,
      coordinatorRole: options.coordinatorRole,
      settings: options.settings,
    });
    let coordinator: string | undefined;
    const shutdownWaiters: ActorRef<"stopped">[] = [];
    const onStopped = () => {
      for (const w of shutdownWaiters.splice(0)) w.tell("stopped");
    };
    const ids = new ActorIdRefs(options.remoting);
    const refOf = (id: string) => ids.refOf(id);
    const shardRefs = new Map<string, ActorRef<ShardCommand>>();
    const { activeEntityLimit } = machine.settings;
    /** Gives every local shard its share of the region's active-entity limit. */
    const shareActiveLimit = () => {
      if (activeEntityLimit === 0) return;
      const limit = perShardActiveLimit(activeEntityLimit, shardRefs.size);
      for (const ref of shardRefs.values()) ref.tell({ sk: "shard", t: "set-active-limit", limit });
    };
    const identify = () =>
      options.coordinatorProxy.tell({
        sk: "sharding",
        t: "identify-coordinator",
        replyTo: ctx.self as ActorRef<ShardingMsg>,
      });
    const perform = (outs: readonly RegionOutput<unknown>[]) => {
      for (const o of outs) performRegion(ctx, options, o, refOf, onStopped, shardRefs);
    };
    const feed = (input: RegionInput<unknown>) => perform(machine.handle(input, ctx.now()));
    // Fast path: a message for a shard running here, with nothing of it waiting, goes
    // straight to the shard actor; the machine decides (routesLocally), everything else
    // is fed to it. `command` is the shard's deliver command when the caller has one.
    const deliver = (shard: string, entityId: string, message: unknown, command?: ShardCommand) => {
      if (machine.routesLocally(shard)) {
        const ref = shardRefs.get(shard);
        if (ref !== undefined) {
          ref.tell(command ?? { sk: "shard", t: "deliver", entityId, message });
          return;
        }
      } else {
        const region = machine.forwardsTo(shard);
        if (region !== undefined) {
          forward(refOf, region, shard, entityId, message);
          return;
        }
      }
      feed({ type: "deliver", shard, entityId, message });
    };
    feed({ type: "start" });
    identify();
    // A removed member's regions are gone: forget the homes they had, so messages for
    // their shards wait for the coordinator's new allocation instead of being forwarded.
    const sub = options.cluster.subscribe((e) => {
      if (e.type !== "member-removed") return;
      const a = e.member.uniqueAddress.address;
      ctx.self.tell({ sk: "region", t: "node-removed", node: `${a.system}@${a.host}:${a.port}` });
    });

    return Behaviors.receive<unknown>(
      (_c, m) => {
        if (m instanceof EntityDelivery) {
          deliver(m.shardId, m.entityId, m.message, m);
          return;
        }
        if (isForwardedTuple(m)) {
          deliver(m[1], m[2], m[3]);
          return;
        }
        if (!isInternal(m)) {
          const r = options.route(m);
          if (r === undefined) {
            ctx.system.core.unhandled(m, ctx.self as never);
            return;
          }
          deliver(r.shardId, r.entityId, r.message);
          return;
        }
        const msg = m as RegionMsg;
        if (msg.sk === "shard-report") {
          if (msg.t === "returned")
            feed({
              type: "return-to-region",
              shard: msg.shard,
              messages: msg.messages.map((x) => ({ entityId: x.entityId, message: x.message })),
            });
          else if (msg.t === "started") {
            feed({ type: "shard-started-local", shard: msg.shard });
            shareActiveLimit();
          } else {
            shardRefs.delete(msg.shard);
            feed({ type: "local-shard-stopped", shard: msg.shard });
            shareActiveLimit();
          }
          return;
        }
        if (msg.sk === "region") {
          if (msg.t === "get-state") {
            replyState(ctx, machine, selfId, msg.timeoutMs, msg.replyTo);
            return;
          }
          if (msg.t === "get-home") {
            const v = machine.view();
            const local = v.localShards.some((l) => l.shard === msg.shard);
            const home = local ? selfId : v.homes.find((h) => h.shard === msg.shard)?.region;
            msg.replyTo.tell({ region: home ?? null });
            return;
          }
          if (msg.t === "graceful-shutdown") {
            shutdownWaiters.push(msg.replyTo);
            feed({ type: "graceful-shutdown" });
            return;
          }
          if (msg.t === "self-downed") {
            feed({ type: "self-downed" });
            return;
          }
          if (msg.t === "node-removed") {
            const regions = new Set(machine.view().homes.map((h) => h.region));
            for (const region of regions)
              if (splitActorId(region)?.node === msg.node)
                feed({ type: "region-terminated", region });
            return;
          }
          if (msg.t === "timer") {
            if (msg.key === "register" && coordinator === undefined) identify();
            feed({ type: "timer", key: msg.key });
          } else if (msg.id === coordinator) {
            coordinator = undefined;
            feed({ type: "coordinator-changed", coordinator: undefined });
            identify();
          }
          return;
        }
        switch (msg.t) {
          case "coordinator-is":
            if (msg.id !== coordinator) {
              coordinator = msg.id;
              const ref = refOf(msg.id);
              if (ref !== undefined)
                ctx.watchWith(ref as ActorRef<never>, {
                  sk: "region",
                  t: "coordinator-gone",
                  id: msg.id,
                });
              feed({ type: "coordinator-changed", coordinator: msg.id });
            }
            return;
          case "from-coordinator":
            feed({ type: "coordinator-message", from: msg.from, message: msg.cmd });
            return;
          case "forwarded":
            deliver(msg.shard, msg.entityId, msg.message);
            return;
          case "relay-to-coordinator":
            // After every message the sender forwarded here before (same channel): pass on.
            refOf(msg.coordinator)?.tell({ sk: "sharding", t: "to-coordinator", cmd: msg.cmd });
            return;
          default:
            return;
        }
      },
      (_c, signal) => {
        if (signal.type === "PostStop") sub.dispose();
        return undefined;
      },
    );
  });
}

/** Collects the live entity ids of every local shard (a shard that does not answer in time counts as empty). */
function replyState(
  ctx: ActorContext<unknown>,
  machine: RegionMachine<unknown>,
  selfId: string,
  timeoutMs: number,
  replyTo: ActorRef<RegionState>,
): void {
  const shards = machine.view().localShards.map((l) => l.shard);
  const asks = shards.map((shardId) => {
    const child = ctx.child(`shard-${encodeURIComponent(shardId)}`) as
      | ActorRef<ShardCommand>
      | undefined;
    if (child === undefined)
      return Promise.resolve({ shardId, entityIds: [] as readonly string[] });
    return ask(
      child,
      (r: ActorRef<readonly string[]>) => ({
        sk: "shard" as const,
        t: "entities" as const,
        replyTo: r,
      }),
      { timeoutMs },
    )
      .then((entityIds) => ({ shardId, entityIds }))
      .catch(() => ({ shardId, entityIds: [] as readonly string[] }));
  });
  void Promise.all(asks).then((list) => replyTo.tell({ region: selfId, shards: list }));
}

function isInternal(m: unknown): boolean {
  if (isShardingMsg(m)) return true;
  const sk = typeof m === "object" && m !== null ? (m as { sk?: unknown }).sk : undefined;
  return sk === "shard-report" || sk === "region";
}

function forward(
  refOf: (id: string) => ActorRef<ShardingMsg> | undefined,
  region: string,
  shard: string,
  entityId: string,
  message: unknown,
): void {
  const tuple: ForwardedTuple = [FORWARDED_TAG, shard, entityId, message];
  (refOf(region) as ActorRef<ForwardedTuple> | undefined)?.tell(tuple);
}

function performRegion(
  ctx: ActorContext<unknown>,
  options: RegionActorOptions,
  o: RegionOutput<unknown>,
  refOf: (id: string) => ActorRef<ShardingMsg> | undefined,
  onStopped: () => void,
  shardRefs: Map<string, ActorRef<ShardCommand>>,
): void {
  switch (o.type) {
    case "send-to-coordinator":
      refOf(o.coordinator)?.tell({ sk: "sharding", t: "to-coordinator", cmd: o.message });
      return;
    case "relay-to-coordinator":
      refOf(o.via)?.tell({
        sk: "sharding",
        t: "relay-to-coordinator",
        coordinator: o.coordinator,
        cmd: o.message,
      });
      return;
    case "forward":
      forward(refOf, o.region, o.shard, o.envelope.entityId, o.envelope.message);
      return;
    case "deliver-local":
      shardRefs.get(o.shard)?.tell({
        sk: "shard",
        t: "deliver",
        entityId: o.envelope.entityId,
        message: o.envelope.message,
      });
      return;
    case "start-shard": {
      if (options.createBehavior === undefined) return;
      const shardRef = ctx.spawn(
        shardBehavior({
          shardId: o.shard,
          region: ctx.self as ActorRef<ShardReport>,
          createBehavior: options.createBehavior,
          handOffStopMessage: options.handOffStopMessage,
          settings: options.shardSettings,
          remember: options.remember,
          lifecycle: options.lifecycle,
        }),
        `shard-${encodeURIComponent(o.shard)}`,
      );
      shardRefs.set(o.shard, shardRef);
      ctx.self.tell({ sk: "shard-report", t: "started", shard: o.shard });
      return;
    }
    case "stop-shard":
      shardRefs.get(o.shard)?.tell({ sk: "shard", t: "shutdown" });
      return;
    case "hand-off-shard":
      shardRefs.get(o.shard)?.tell({ sk: "shard", t: "hand-off" });
      return;
    case "dead-letter":
      ctx.system.core.deadLetter(
        o.envelope.message,
        ctx.self.path.toString(),
        o.reason === "buffer-overflow" ? "buffer-overflow" : "stopped",
      );
      return;
    case "start-timer":
      ctx.timers.startSingleTimer(o.key, { sk: "region", t: "timer", key: o.key }, o.delayMs);
      return;
    case "cancel-timer":
      ctx.timers.cancel(o.key);
      return;
    case "log":
      ctx.log[o.level](o.text, { type: options.typeName, event: o.event });
      return;
    case "stopped":
      onStopped();
      return;
  }
}
