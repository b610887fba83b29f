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
import {
  EntityEnvelope,
  EntityEnvelopeWire,
  isRegionMsg,
  type RegionControl,
  type RegionMsg,
  type RegionState,
  type ShardCommand,
  type ShardingMsg,
  type ShardReport,
} from "../../protocol/sharding.js";
import type { Cluster } from "../membership/cluster.js";
import type { Remoting } from "../remoting/remoting.js";
import { type EntityContext, type ShardRememberOptions, shardBehavior } from "./shard-actor.js";
import type { ShardLifecycle } from "./sharding-lifecycle.js";
import { ActorIdRefs, actorIdOf, splitActorId } from "./sharding-messages.js";

export interface RegionActorOptions {
  readonly typeName: string;
  readonly member: string;
  readonly remoting: Remoting;
  /** The coordinator singleton's proxy (for identification). */
  readonly coordinatorProxy: ActorRef<ShardingMsg>;
  /** The envelope of a user message (undefined: not a message of this type). */
  readonly route: (message: unknown) => EntityEnvelope | undefined;
  /** undefined = proxy only (never hosts shards). */
  readonly createBehavior?: (ctx: EntityContext) => Behavior<unknown>;
  readonly handOffStopMessage?: unknown;
  readonly settings: Readonly<RegionSettings>;
  readonly shardSettings: Readonly<ShardSettings>;
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

export type { RegionControl, RegionState };

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
      for (const ref of shardRefs.values())
        ref.tell({ type: "shardkit.shard.set-active-limit", limit });
    };
    const identify = () =>
      options.coordinatorProxy.tell({
        type: "shardkit.identify-coordinator",
        replyTo: ctx.self as ActorRef<ShardingMsg>,
      });
    const perform = (outs: readonly RegionOutput<unknown>[]) => {
      for (const o of outs) performRegion(ctx, options, o, refOf, onStopped, shardRefs);
    };
    const feed = (input: RegionInput<unknown>) => perform(machine.handle(input, ctx.now()));
    // Fast path: the machine's routing decision (`route`), acted on without `handle` when
    // it names a region; everything else is fed to the machine. The envelope itself is
    // what the local shard gets.
    const deliver = (envelope: EntityEnvelope) => {
      const to = machine.route(envelope.shardId);
      if (to === selfId) {
        const ref = shardRefs.get(envelope.shardId);
        if (ref !== undefined) {
          ref.tell(envelope);
          return;
        }
      } else if (to !== undefined) {
        forward(refOf, to, envelope);
        return;
      }
      feed({
        type: "deliver",
        shard: envelope.shardId,
        entityId: envelope.entityId,
        message: envelope.message,
      });
    };
    feed({ type: "start" });
    identify();
    // A removed member's regions are gone: forget the homes they had, so messages for
    // their shards wait for the coordinator's new allocation instead of being forwarded.
    const sub = options.cluster.subscribe((e) => {
      if (e.type !== "member-removed") return;
      const a = e.member.uniqueAddress.address;
      ctx.self.tell({
        type: "shardkit.region.node-removed",
        node: `${a.system}@${a.host}:${a.port}`,
      });
    });
    const onRegionMsg = (msg: RegionMsg) => {
      switch (msg.type) {
        case "shardkit.shard-returned":
          feed({
            type: "return-to-region",
            shard: msg.shard,
            messages: msg.messages.map((x) => ({ entityId: x.entityId, message: x.message })),
          });
          return;
        case "shardkit.shard-started":
          feed({ type: "shard-started-local", shard: msg.shard });
          shareActiveLimit();
          return;
        case "shardkit.shard-stopped":
          shardRefs.delete(msg.shard);
          feed({ type: "local-shard-stopped", shard: msg.shard });
          shareActiveLimit();
          return;
        case "shardkit.region.get-state":
          replyState(ctx, machine, selfId, msg.timeoutMs, msg.replyTo);
          return;
        case "shardkit.region.get-home": {
          const v = machine.view();
          const local = v.localShards.some((l) => l.shard === msg.shard);
          const home = local ? selfId : v.homes.find((h) => h.shard === msg.shard)?.region;
          msg.replyTo.tell({ region: home ?? null });
          return;
        }
        case "shardkit.region.graceful-shutdown":
          shutdownWaiters.push(msg.replyTo as ActorRef<"stopped">);
          feed({ type: "graceful-shutdown" });
          return;
        case "shardkit.region.self-downed":
          feed({ type: "self-downed" });
          return;
        case "shardkit.region.node-removed": {
          const regions = new Set(machine.view().homes.map((h) => h.region));
          for (const region of regions)
            if (splitActorId(region)?.node === msg.node)
              feed({ type: "region-terminated", region });
          return;
        }
        case "shardkit.region.timer":
          if (msg.key === "register" && coordinator === undefined) identify();
          feed({ type: "timer", key: msg.key });
          return;
        case "shardkit.region.coordinator-gone":
          if (msg.id !== coordinator) return;
          coordinator = undefined;
          feed({ type: "coordinator-changed", coordinator: undefined });
          identify();
          return;
        case "shardkit.coordinator-is":
          if (msg.id === coordinator) return;
          coordinator = msg.id;
          watchCoordinator(msg.id);
          feed({ type: "coordinator-changed", coordinator: msg.id });
          return;
        case "shardkit.from-coordinator":
          feed({ type: "coordinator-message", from: msg.from, message: msg.cmd });
          return;
        case "shardkit.relay-to-coordinator":
          // After every message the sender forwarded here before (same channel): pass on.
          refOf(msg.coordinator)?.tell({ type: "shardkit.to-coordinator", cmd: msg.cmd });
          return;
        default:
          return; // coordinator-bound messages are not for a region
      }
    };
    const watchCoordinator = (id: string) => {
      const ref = refOf(id);
      if (ref !== undefined)
        ctx.watchWith(ref as ActorRef<never>, { type: "shardkit.region.coordinator-gone", id });
    };

    return Behaviors.receive<unknown>(
      (_c, m) => {
        if (m instanceof EntityEnvelope) {
          deliver(m);
          return;
        }
        const forwarded = EntityEnvelopeWire.decode(m);
        if (forwarded !== undefined) {
          deliver(forwarded);
          return;
        }
        if (isRegionMsg(m)) {
          onRegionMsg(m);
          return;
        }
        const envelope = options.route(m);
        if (envelope === undefined) ctx.system.core.unhandled(m, ctx.self as never);
        else deliver(envelope);
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
  replyTo: { tell(state: RegionState): void },
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
        type: "shardkit.shard.entities" as const,
        replyTo: r,
      }),
      { timeoutMs },
    )
      .then((entityIds) => ({ shardId, entityIds }))
      .catch(() => ({ shardId, entityIds: [] as readonly string[] }));
  });
  void Promise.all(asks).then((list) => replyTo.tell({ region: selfId, shards: list }));
}

function forward(
  refOf: (id: string) => ActorRef<ShardingMsg> | undefined,
  region: string,
  envelope: EntityEnvelope,
): void {
  (refOf(region) as ActorRef<unknown> | undefined)?.tell(EntityEnvelopeWire.encode(envelope));
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
      refOf(o.coordinator)?.tell({ type: "shardkit.to-coordinator", cmd: o.message });
      return;
    case "relay-to-coordinator":
      refOf(o.via)?.tell({
        type: "shardkit.relay-to-coordinator",
        coordinator: o.coordinator,
        cmd: o.message,
      });
      return;
    case "forward":
      forward(
        refOf,
        o.region,
        new EntityEnvelope(o.shard, o.envelope.entityId, o.envelope.message),
      );
      return;
    case "deliver-local":
      shardRefs
        .get(o.shard)
        ?.tell(new EntityEnvelope(o.shard, o.envelope.entityId, o.envelope.message));
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
      ctx.self.tell({ type: "shardkit.shard-started", shard: o.shard });
      return;
    }
    case "stop-shard":
      shardRefs.get(o.shard)?.tell({ type: "shardkit.shard.shutdown" });
      return;
    case "hand-off-shard":
      shardRefs.get(o.shard)?.tell({ type: "shardkit.shard.hand-off" });
      return;
    case "dead-letter":
      ctx.system.core.deadLetter(
        o.envelope.message,
        ctx.self.path.toString(),
        o.reason === "buffer-overflow" ? "buffer-overflow" : "stopped",
      );
      return;
    case "start-timer":
      ctx.timers.startSingleTimer(o.key, { type: "shardkit.region.timer", key: o.key }, o.delayMs);
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
