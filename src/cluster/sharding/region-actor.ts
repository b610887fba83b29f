/**
 * The region actor of one entity type on one node: drives a RegionMachine (core/region).
 * It finds the coordinator through the coordinator singleton's proxy, registers, routes
 * messages by shard (locally to its shard children, or to the owning region), and runs
 * the hand-off protocol for its shards.
 *
 * Shape (machine-driver.ts): RegionDriver feeds the machine and performs its outputs
 * through `performers` (one entry per output type); its own messages go through
 * `handlers` (one entry per message type); entity envelopes take the fast path of the
 * machine's routing decision (`deliver`).
 */

import type { ActorContext } from "../../actor/actor-context.js";
import type { ActorRef } from "../../actor/actor-ref.js";
import { ask } from "../../actor/ask.js";
import { type Behavior, Behaviors } from "../../actor/behavior.js";
import {
  dispatch,
  type Handlers,
  logOutput,
  MachineDriver,
  type Performers,
  timerPerformers,
} from "../../actor/machine-driver.js";
import { RegionMachine } from "../../core/region/region-machine.js";
import { perShardActiveLimit, type RegionSettings } from "../../core/region/region-settings.js";
import type { RegionInput, RegionOutput } from "../../core/region/region-types.js";
import type { ShardLeaseSettings } from "../../core/shard/shard-lease-machine.js";
import type { ShardSettings } from "../../core/shard/shard-settings.js";
import type { Journal } from "../../ports/journal.js";
import type { LeaseStore } from "../../ports/lease.js";
import { TraceSpanKind, type Tracing } from "../../ports/tracing.js";
import {
  EntityEnvelope,
  EntityEnvelopeWire,
  isRegionMsg,
  isStartEntity,
  type RegionControl,
  type RegionMsg,
  type RegionState,
  type ShardCommand,
  type ShardingMsg,
  type ShardReport,
} from "../../protocol/sharding.js";
import type { Cluster } from "../membership/cluster.js";
import type { Remoting } from "../remoting/remoting.js";
import { RefusedPeers } from "./refused-peers.js";
import { type EntityContext, type ShardRememberOptions, shardBehavior } from "./shard-actor.js";
import { ShardHomeTiming } from "./shard-home-timing.js";
import type { RegionProbe, ShardLifecycle, ShardProbe } from "./sharding-lifecycle.js";
import { ActorIdRefs, actorIdOf, splitActorId } from "./sharding-messages.js";
import { entityAttributes, SpanAttributes, SpanNames, TracedMessage } from "./traced-message.js";

export interface RegionActorOptions {
  readonly typeName: string;
  readonly member: string;
  readonly remoting: Remoting;
  /** The coordinator singleton's proxy (for identification). */
  readonly coordinatorProxy: ActorRef<ShardingMsg>;
  /** The envelope of a user message (undefined: not a message of this type). */
  readonly route: (message: unknown) => EntityEnvelope | undefined;
  /**
   * The type's schema check (docs/evolution.md): applied to messages that may come from
   * another member (forwards, and messages routed by `route`); an invalid one becomes a
   * dead letter ("invalid-message") with the MessageValidationError. EntityEnvelopes
   * made on this member were checked at the call site.
   */
  readonly checkInbound?: (message: unknown) => unknown;
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
  /** Shard leases (each shard holds `<typeName>/<shardId>`). */
  readonly lease?: {
    readonly store: LeaseStore;
    readonly settings: Readonly<ShardLeaseSettings>;
    readonly journals: readonly Journal[];
  };
  /** Membership: regions on removed members are forgotten (their shards move). */
  readonly cluster: Cluster;
  /**
   * Tracing (docs/observability.md, "Tracing"): traced messages get region and forward
   * spans, and traced forwards from other members continue their trace. Undefined: off
   * (a traced forward received is delivered untraced).
   */
  readonly tracing?: Tracing;
}

export type { RegionControl, RegionState };

export function regionBehavior(options: RegionActorOptions): Behavior<unknown> {
  return Behaviors.setup<unknown>((ctx) => {
    const region = new RegionDriver(ctx, options);
    return Behaviors.receive<unknown>(
      (_c, m) => region.receive(m),
      (_c, signal) => {
        if (signal.type === "PostStop") region.dispose();
        return undefined;
      },
    );
  });
}

type RegionDelivery = RegionInput<unknown> & { readonly type: "deliver" };

/** The driver of one RegionMachine (see the module comment). */
class RegionDriver {
  private readonly machine: RegionMachine<unknown>;
  private readonly selfId: string;
  private readonly driver: MachineDriver<RegionInput<unknown>, RegionOutput<unknown>>;
  private readonly ids: ActorIdRefs;
  private readonly shardRefs = new Map<string, ActorRef<ShardCommand>>();
  private readonly shutdownWaiters: ActorRef<"stopped">[] = [];
  private readonly handlers: Handlers<RegionMsg>;
  private readonly unsubscribe: () => void;
  private coordinator: string | undefined;
  /** With a lifecycle listener (metrics): GetShardHome round trips and the region's figures. */
  private readonly homeTiming: ShardHomeTiming | undefined;
  private readonly probe: RegionProbe | undefined;
  /** The probes of the running shards (with a lifecycle listener), read by `probe`. */
  private readonly shardProbes: Set<ShardProbe> | undefined;

  constructor(
    private readonly ctx: ActorContext<unknown>,
    private readonly options: RegionActorOptions,
  ) {
    this.selfId = actorIdOf(options.remoting, ctx.self as ActorRef<never>);
    this.machine = new RegionMachine<unknown>({
      self: this.selfId,
      member: options.member,
      typeName: options.typeName,
      proxy: options.createBehavior === undefined,
      role: options.role,
      coordinatorRole: options.coordinatorRole,
      settings: options.settings,
    });
    this.ids = new ActorIdRefs(options.remoting);
    const { lifecycle } = options;
    if (lifecycle !== undefined) {
      const machine = this.machine;
      this.homeTiming = new ShardHomeTiming(
        () => ctx.now(),
        (shard, ms) => lifecycle.shardHomeReceived(shard, ms),
      );
      const shardProbes = new Set<ShardProbe>();
      this.shardProbes = shardProbes;
      this.probe = {
        get bufferedMessages() {
          return machine.stats.bufferedMessages;
        },
        get shardBufferedMessages() {
          let n = 0;
          for (const p of shardProbes) n += p.bufferedMessages;
          return n;
        },
      };
      lifecycle.regionStarted(this.probe);
    }
    this.driver = new MachineDriver(this.machine, () => ctx.now(), this.performers());
    this.handlers = this.messageHandlers();
    this.driver.feed({ type: "start" });
    this.identify();
    // A removed member's regions are gone: forget the homes they had, so messages for
    // their shards wait for the coordinator's new allocation instead of being forwarded.
    // With shard leases the same happens when the member becomes unreachable: the
    // coordinator moves its shards without waiting for the removal (coordinator settings,
    // unreachableMoveAfterMs) and answers requests for them once they have a new home, or
    // the old one again if the member comes back first.
    const leased = options.lease !== undefined;
    const sub = options.cluster.subscribe((e) => {
      if (e.type !== "member-removed" && !(leased && e.type === "unreachable-member")) return;
      const a = e.member.uniqueAddress.address;
      ctx.self.tell({
        type: "shardkit.region.node-removed",
        node: `${a.system}@${a.host}:${a.port}`,
      });
    });
    // ... and when its port refuses connections (refused-peers.ts), before the failure
    // detector notices a crash.
    const system = options.cluster.membershipState.selfUniqueAddress.address.system;
    const refused = leased
      ? new RefusedPeers(options.remoting, (hostPort, isRefused) => {
          if (isRefused)
            ctx.self.tell({ type: "shardkit.region.node-removed", node: `${system}@${hostPort}` });
        })
      : undefined;
    this.unsubscribe = () => {
      sub.dispose();
      refused?.dispose();
    };
  }

  dispose(): void {
    this.unsubscribe();
    this.homeTiming?.clear();
    if (this.probe !== undefined) this.options.lifecycle?.regionStopped(this.probe);
  }

  receive(m: unknown): void {
    if (m instanceof EntityEnvelope) {
      this.deliver(m);
      return;
    }
    const forwarded = EntityEnvelopeWire.decode(m);
    if (forwarded !== undefined) this.deliverChecked(forwarded, true);
    else if (isRegionMsg(m)) dispatch(this.handlers, m);
    else if (this.receiveTraced(m)) return;
    else {
      const envelope = this.options.route(m);
      if (envelope === undefined) this.ctx.system.core.unhandled(m, this.ctx.self as never);
      else this.deliverChecked(envelope, false);
    }
  }

  /**
   * A traced forward from another member (EntityEnvelopeWire.decodeTraced): delivered
   * like a forward, in a span continuing the sender's trace when tracing is on here.
   * False when `m` is not one.
   */
  private receiveTraced(m: unknown): boolean {
    const traced = EntityEnvelopeWire.decodeTraced(m);
    if (traced === undefined) return false;
    const { tracing, typeName } = this.options;
    const parent =
      tracing === undefined || traced.trace === undefined
        ? undefined
        : tracing.extract(traced.trace);
    const { envelope } = traced;
    this.deliverChecked(
      envelope,
      true,
      parent === undefined || tracing === undefined
        ? undefined
        : (message) =>
            new TracedMessage(
              message,
              parent,
              tracing,
              entityAttributes(typeName, envelope.shardId, envelope.entityId),
              true,
            ),
    );
    return true;
  }

  /**
   * deliver, after the type's schema check when it has one (see checkInbound); `wrap`
   * makes the checked message a traced one. `forwarded`: it came from another member.
   */
  private deliverChecked(
    envelope: EntityEnvelope,
    forwarded: boolean,
    wrap?: (message: unknown) => TracedMessage,
  ): void {
    const check = this.options.checkInbound;
    if (wrap !== undefined) {
      let message = envelope.message;
      if (check !== undefined && !isStartEntity(message)) {
        try {
          message = check(message);
        } catch (error) {
          this.ctx.system.core.deadLetter(
            message,
            this.ctx.self as never,
            "invalid-message",
            error,
          );
          return;
        }
      }
      this.deliver(
        new EntityEnvelope(envelope.shardId, envelope.entityId, wrap(message), true),
        forwarded,
      );
      return;
    }
    if (check === undefined || isStartEntity(envelope.message)) {
      this.deliver(envelope, forwarded);
      return;
    }
    let message: unknown;
    try {
      message = check(envelope.message);
    } catch (error) {
      this.ctx.system.core.deadLetter(
        envelope.message,
        this.ctx.self as never,
        "invalid-message",
        error,
      );
      return;
    }
    this.deliver(new EntityEnvelope(envelope.shardId, envelope.entityId, message), forwarded);
  }

  /**
   * Fast path: the machine's routing decision (`route`), acted on without `handle` when
   * it names a region; everything else is fed to the machine. The envelope itself is
   * what the local shard gets.
   */
  private deliver(envelope: EntityEnvelope, forwarded = false): void {
    // a traced envelope exists only where this type traces (the same `tracing` as here)
    if (envelope.traced) {
      this.deliverTraced(envelope, envelope.message as TracedMessage, forwarded);
      return;
    }
    this.deliverRouted(envelope, forwarded);
  }

  /** deliver in a `shardkit.region.route` span (a child of the message's context). */
  private deliverTraced(envelope: EntityEnvelope, m: TracedMessage, forwarded: boolean): void {
    const span = m.enter(
      SpanNames.REGION,
      m.received ? TraceSpanKind.CONSUMER : TraceSpanKind.INTERNAL,
    );
    m.received = false;
    span.setAttribute(SpanAttributes.MEMBER, this.options.member);
    const to = this.machine.route(envelope.shardId);
    span.setAttribute(
      SpanAttributes.ROUTE,
      to === this.selfId ? "local" : to === undefined || forwarded ? "buffer" : "forward",
    );
    try {
      this.deliverRouted(envelope, forwarded);
    } finally {
      span.end();
    }
  }

  /** `forwarded`: it came from another region or a proxy, never forwarded again. */
  private deliverRouted(envelope: EntityEnvelope, forwarded = false): void {
    const to = this.machine.route(envelope.shardId);
    if (to === this.selfId) {
      const ref = this.shardRefs.get(envelope.shardId);
      if (ref !== undefined) {
        ref.tell(envelope);
        return;
      }
    } else if (to !== undefined && !forwarded) {
      this.forward(to, envelope);
      return;
    }
    const input: RegionDelivery = {
      type: "deliver",
      shard: envelope.shardId,
      entityId: envelope.entityId,
      message: envelope.message,
      forwarded,
    };
    this.driver.feed(input);
  }

  private forward(region: string, envelope: EntityEnvelope): void {
    const ref = this.refOf(region) as ActorRef<unknown> | undefined;
    if (ref === undefined) return;
    if (envelope.traced)
      this.forwardTraced(ref, region, envelope, envelope.message as TracedMessage);
    else ref.tell(EntityEnvelopeWire.encode(envelope));
  }

  /**
   * The remote hop of a traced message: a `shardkit.region.forward` span whose W3C
   * context travels with the message (the traced wire form, protocol/sharding.ts).
   */
  private forwardTraced(
    ref: ActorRef<unknown>,
    region: string,
    envelope: EntityEnvelope,
    m: TracedMessage,
  ): void {
    const span = m.tracing.start(
      SpanNames.FORWARD,
      TraceSpanKind.PRODUCER,
      m.context,
      m.attributes,
    );
    span.setAttribute(SpanAttributes.TARGET_REGION, region);
    span.setAttribute(SpanAttributes.MEMBER, this.options.member);
    try {
      const untraced = new EntityEnvelope(envelope.shardId, envelope.entityId, m.message);
      const trace = m.tracing.inject(span.context);
      ref.tell(
        trace === undefined
          ? EntityEnvelopeWire.encode(untraced)
          : EntityEnvelopeWire.encodeTraced(untraced, trace),
      );
    } finally {
      span.end();
    }
  }

  /** The envelope of a message the machine held (a traced one keeps its trace). */
  private bufferedEnvelope(
    shard: string,
    e: { readonly entityId: string; readonly message: unknown },
  ): EntityEnvelope {
    const traced = this.options.tracing !== undefined && e.message instanceof TracedMessage;
    return new EntityEnvelope(shard, e.entityId, e.message, traced);
  }

  private refOf(id: string): ActorRef<ShardingMsg> | undefined {
    return this.ids.refOf(id);
  }

  private identify(): void {
    this.options.coordinatorProxy.tell({
      type: "shardkit.identify-coordinator",
      replyTo: this.ctx.self as ActorRef<ShardingMsg>,
    });
  }

  /** Gives every local shard its share of the region's active-entity limit. */
  private shareActiveLimit(): void {
    const { activeEntityLimit } = this.machine.settings;
    if (activeEntityLimit === 0) return;
    const limit = perShardActiveLimit(activeEntityLimit, this.shardRefs.size);
    for (const ref of this.shardRefs.values())
      ref.tell({ type: "shardkit.shard.set-active-limit", limit });
  }

  /** The machine's outputs. */
  private performers(): Performers<RegionOutput<unknown>> {
    const { ctx, options } = this;
    return {
      "send-to-coordinator": (o) => {
        if (o.message.type === "get-shard-home") this.homeTiming?.asked(o.message.shard);
        this.refOf(o.coordinator)?.tell({ type: "shardkit.to-coordinator", cmd: o.message });
      },
      "relay-to-coordinator": (o) =>
        this.refOf(o.via)?.tell({
          type: "shardkit.relay-to-coordinator",
          coordinator: o.coordinator,
          cmd: o.message,
        }),
      forward: (o) => this.forward(o.region, this.bufferedEnvelope(o.shard, o.envelope)),
      "deliver-local": (o) =>
        this.shardRefs.get(o.shard)?.tell(this.bufferedEnvelope(o.shard, o.envelope)),
      "start-shard": (o) => this.startShard(o.shard),
      "stop-shard": (o) => this.shardRefs.get(o.shard)?.tell({ type: "shardkit.shard.shutdown" }),
      "hand-off-shard": (o) =>
        this.shardRefs.get(o.shard)?.tell({ type: "shardkit.shard.hand-off" }),
      "dead-letter": (o) =>
        ctx.system.core.deadLetter(
          o.envelope.message,
          ctx.self.path.toString(),
          o.reason === "buffer-overflow" ? "buffer-overflow" : "stopped",
        ),
      ...timerPerformers(ctx.timers, (key) => ({ type: "shardkit.region.timer", key })),
      log: (o) => logOutput(ctx.log, o.level, o.text, { type: options.typeName, event: o.event }),
      stopped: () => {
        for (const w of this.shutdownWaiters.splice(0)) w.tell("stopped");
      },
    };
  }

  private startShard(shard: string): void {
    const { ctx, options } = this;
    if (options.createBehavior === undefined) return;
    const shardRef = ctx.spawn(
      shardBehavior({
        shardId: shard,
        region: ctx.self as ActorRef<ShardReport>,
        createBehavior: options.createBehavior,
        handOffStopMessage: options.handOffStopMessage,
        settings: options.shardSettings,
        remember: options.remember,
        lifecycle: options.lifecycle,
        ...(this.shardProbes === undefined ? {} : { probes: this.shardProbes }),
        ...(options.lease === undefined
          ? {}
          : {
              lease: {
                ...options.lease,
                name: `${options.typeName}/${shard}`,
                member: options.member,
              },
            }),
      }),
      `shard-${encodeURIComponent(shard)}`,
    );
    this.shardRefs.set(shard, shardRef);
    ctx.self.tell({ type: "shardkit.shard-started", shard });
  }

  /** The region's own messages: shard reports, queries, control, coordinator traffic. */
  private messageHandlers(): Handlers<RegionMsg> {
    const feed = (input: RegionInput<unknown>) => this.driver.feed(input);
    return {
      "shardkit.shard-returned": (m) =>
        feed({
          type: "return-to-region",
          shard: m.shard,
          messages: m.messages.map((x) => ({ entityId: x.entityId, message: x.message })),
        }),
      "shardkit.shard-started": (m) => {
        feed({ type: "shard-started-local", shard: m.shard });
        this.shareActiveLimit();
      },
      "shardkit.shard-stopped": (m) => {
        this.shardRefs.delete(m.shard);
        feed({ type: "local-shard-stopped", shard: m.shard });
        this.shareActiveLimit();
      },
      "shardkit.region.get-state": (m) =>
        replyState(this.ctx, this.machine, this.selfId, m.timeoutMs, m.replyTo),
      "shardkit.region.get-home": (m) => m.replyTo.tell({ region: this.homeOf(m.shard) }),
      "shardkit.region.graceful-shutdown": (m) => {
        this.shutdownWaiters.push(m.replyTo as ActorRef<"stopped">);
        feed({ type: "graceful-shutdown" });
      },
      "shardkit.region.self-downed": () => feed({ type: "self-downed" }),
      "shardkit.region.stop": () => feed({ type: "stop" }),
      "shardkit.region.node-removed": (m) => this.onNodeRemoved(m.node),
      "shardkit.region.timer": (m) => {
        if (m.key === "register" && this.coordinator === undefined) this.identify();
        feed({ type: "timer", key: m.key });
      },
      "shardkit.region.coordinator-gone": (m) => this.onCoordinatorGone(m.id),
      "shardkit.coordinator-is": (m) => this.onCoordinatorIs(m.id),
      "shardkit.from-coordinator": (m) => {
        this.homeTiming?.received(m.cmd);
        feed({ type: "coordinator-message", from: m.from, message: m.cmd });
      },
      // After every message the sender forwarded here before (same channel): pass on.
      "shardkit.relay-to-coordinator": (m) =>
        this.refOf(m.coordinator)?.tell({ type: "shardkit.to-coordinator", cmd: m.cmd }),
      // coordinator-bound messages are not for a region
      "shardkit.to-coordinator": () => {},
      "shardkit.identify-coordinator": () => {},
      "shardkit.get-regions": () => {},
      "shardkit.get-hand-offs": () => {},
    };
  }

  private homeOf(shard: string): string | null {
    const v = this.machine.view();
    if (v.localShards.some((l) => l.shard === shard)) return this.selfId;
    return v.homes.find((h) => h.shard === shard)?.region ?? null;
  }

  private onNodeRemoved(node: string): void {
    const regions = new Set(this.machine.view().homes.map((h) => h.region));
    for (const region of regions)
      if (splitActorId(region)?.node === node)
        this.driver.feed({ type: "region-terminated", region });
    // The coordinator there is gone too (with shard leases: it may be, and its singleton
    // moves to a reachable member once its lease expired): look for it again now rather
    // than when the watch fires.
    const coordinator = this.coordinator;
    if (coordinator !== undefined && splitActorId(coordinator)?.node === node)
      this.onCoordinatorGone(coordinator);
  }

  private onCoordinatorIs(id: string): void {
    if (id === this.coordinator) return;
    this.coordinator = id;
    const ref = this.refOf(id);
    if (ref !== undefined)
      this.ctx.watchWith(ref as ActorRef<never>, { type: "shardkit.region.coordinator-gone", id });
    this.driver.feed({ type: "coordinator-changed", coordinator: id });
  }

  private onCoordinatorGone(id: string): void {
    if (id !== this.coordinator) return;
    this.coordinator = undefined;
    this.driver.feed({ type: "coordinator-changed", coordinator: undefined });
    this.identify();
  }
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
