/**
 * The shard coordinator actor: the cluster singleton instance that drives a
 * CoordinatorMachine (core/coordinator). It feeds the machine with the cluster's
 * membership, the regions' commands, timers and the rebalance tick, and performs its
 * outputs. Two state stores (stateStoreMode):
 * - "regions" (no store): a new coordinator rebuilds the allocation from what the
 *   regions report; events are acknowledged on the next turn.
 * - "persistence": a CoordinatorStore. The actor first loads the snapshot and events
 *   (stashing what arrives meanwhile, dropping beyond the stash bound: regions retry),
 *   then writes every batch the machine emits and feeds `persisted` / `persist-failed`.
 *   A JournalConflictError (another coordinator wrote) makes the actor fail, and its
 *   supervisor restarts it with backoff: it reloads instead of going on with a stale state.
 */

import type { ActorContext } from "../../actor/actor-context.js";
import type { ActorRef } from "../../actor/actor-ref.js";
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
import { SupervisorStrategy } from "../../actor/supervision.js";
import {
  type CoordinatorInput,
  type CoordinatorMember,
  type CoordinatorOutput,
  type CoordinatorRemoval,
  parseCoordinatorTimer,
} from "../../core/coordinator/coordinator-io.js";
import {
  CoordinatorMachine,
  type CoordinatorRecovery,
} from "../../core/coordinator/coordinator-machine.js";
import type { CoordinatorSettings } from "../../core/coordinator/coordinator-settings.js";
import { uniqueAddressToString } from "../../core/membership/unique-address.js";
import { JournalConflictError } from "../../ports/journal.js";
import { isShardingMsg, type ShardingMsg } from "../../protocol/sharding.js";
import type { Cluster } from "../membership/cluster.js";
import type { Remoting } from "../remoting/remoting.js";
import { adaptAllocationStrategy, type ShardAllocationStrategy } from "./async-strategy.js";
import type { CoordinatorRecoveryData, CoordinatorStore } from "./coordinator-store.js";
import { RefusedPeers } from "./refused-peers.js";
import type { HandOffAbandonCause, ShardLifecycle } from "./sharding-lifecycle.js";
import { ActorIdRefs, actorIdOf } from "./sharding-messages.js";

export interface CoordinatorActorOptions {
  readonly typeName: string;
  readonly cluster: Cluster;
  readonly remoting: Remoting;
  /** May answer with promises (adaptAllocationStrategy). */
  readonly strategy: ShardAllocationStrategy;
  readonly role?: string;
  /** Resolved (ShardingTypeSpec). */
  readonly settings: Readonly<CoordinatorSettings>;
  /**
   * stateStoreMode "persistence": makes the store of one coordinator incarnation (called
   * again after a restart). Undefined: "regions" recovery.
   */
  readonly store?: () => CoordinatorStore;
  /**
   * When this node saw members removed (removal-times.ts): the removal margin counts
   * from then. Absent: every removal gets the whole margin from when the coordinator
   * learns of it.
   */
  readonly removals?: { recent(): readonly CoordinatorRemoval[] };
  /** Told how each hand-off ended (the metrics: count and duration per reason). */
  readonly lifecycle?: ShardLifecycle;
}

/** Supervision of the coordinator: a failure (e.g. a journal conflict) restarts it. */
export const COORDINATOR_RESTART_BACKOFF = Object.freeze({
  minBackoffMs: 1_000,
  maxBackoffMs: 30_000,
  randomFactor: 0.2,
});

type CoordMsg =
  | ShardingMsg
  | { readonly type: "shardkit.coordinator.members" }
  | { readonly type: "shardkit.coordinator.timer"; readonly key: string }
  | { readonly type: "shardkit.coordinator.rebalance" }
  | { readonly type: "shardkit.coordinator.allocation-retry" }
  | { readonly type: "shardkit.coordinator.persisted"; readonly batchId: number }
  | {
      readonly type: "shardkit.coordinator.persist-failed";
      readonly batchId: number;
      readonly error: unknown;
    }
  | { readonly type: "shardkit.coordinator.loaded"; readonly data: CoordinatorRecoveryData }
  | { readonly type: "shardkit.coordinator.load-failed"; readonly error: unknown }
  | { readonly type: "shardkit.coordinator.load-retry" }
  | { readonly type: "shardkit.coordinator.drain-timeout" };

/** The coordinator behavior, supervised (restart with backoff). */
export function coordinatorBehavior(options: CoordinatorActorOptions): Behavior<CoordMsg> {
  const registered: RegisteredRegions = { regions: [] };
  return Behaviors.supervise(
    options.store === undefined
      ? running(options, undefined, { mode: "regions" }, registered)
      : loading(options, registered),
    SupervisorStrategy.restartWithBackoff(COORDINATOR_RESTART_BACKOFF),
  );
}

/**
 * The regions registered with the coordinator when its actor restarted: the actor keeps
 * its id, so its regions stay registered and never register again; the next incarnation
 * counts them as registered (CoordinatorConfig.registered).
 */
interface RegisteredRegions {
  regions: readonly string[];
}

/** stateStoreMode "persistence": load the store, then run. */
function loading(
  options: CoordinatorActorOptions,
  registered: RegisteredRegions,
): Behavior<CoordMsg> {
  return Behaviors.setup<CoordMsg>((ctx) => {
    const store = (options.store as () => CoordinatorStore)();
    const retryMs = options.settings.persistRetryBackoffMs;
    const load = () =>
      store.load().then(
        (data) => ctx.self.tell({ type: "shardkit.coordinator.loaded", data }),
        (error: unknown) => ctx.self.tell({ type: "shardkit.coordinator.load-failed", error }),
      );
    load();
    return Behaviors.receive<CoordMsg>((c, m) => {
      if (!isShardingMsg(m)) {
        if (m.type === "shardkit.coordinator.loaded") {
          c.log.info("coordinator state loaded", {
            type: options.typeName,
            events: m.data.events.length,
            snapshot: m.data.snapshot !== undefined,
          });
          c.stash.unstashAll();
          return running(
            options,
            store,
            { mode: "persistent", snapshot: m.data.snapshot, events: m.data.events },
            registered,
          );
        }
        if (m.type === "shardkit.coordinator.load-failed") {
          c.log.warn("loading the coordinator state failed; retrying", {
            type: options.typeName,
            retryInMs: retryMs,
            error: String(m.error),
          });
          c.timers.startSingleTimer(
            "load-retry",
            { type: "shardkit.coordinator.load-retry" },
            retryMs,
          );
        } else if (m.type === "shardkit.coordinator.load-retry") load();
        return;
      }
      // Regions retry Register and GetShardHome: beyond the stash bound, dropping is safe.
      if (!c.stash.isFull) c.stash.stash(m);
    });
  });
}

function running(
  options: CoordinatorActorOptions,
  store: CoordinatorStore | undefined,
  recovery: CoordinatorRecovery,
  registered: RegisteredRegions,
): Behavior<CoordMsg> {
  return Behaviors.setup<CoordMsg>((ctx) => {
    const coordinator = new CoordinatorDriver(ctx, options, store, recovery, registered.regions);
    return {
      ...Behaviors.receive<CoordMsg>(
        (_c, m) => coordinator.receive(m),
        (_c, signal) => {
          if (signal.type === "PreRestart") registered.regions = coordinator.registeredRegions;
          if (signal.type === "PostStop" || signal.type === "PreRestart") coordinator.dispose();
          return undefined;
        },
      ),
      onPoisonPill: () => coordinator.onPoisonPill(),
    };
  });
}

type CoordSelfMsg = Exclude<CoordMsg, ShardingMsg>;

/**
 * The driver of a running CoordinatorMachine (machine-driver.ts): outputs through
 * `performers`, region traffic and its own messages through `handlers`.
 */
class CoordinatorDriver {
  private readonly machine: CoordinatorMachine;
  private readonly driver: MachineDriver<CoordinatorInput, CoordinatorOutput>;
  private readonly selfId: string;
  private readonly ids: ActorIdRefs;
  private readonly handlers: Handlers<CoordMsg>;
  private readonly unsubscribe: () => void;
  private knownMembers = new Set<string>();
  /** Stopping once the writes ended (onPoisonPill). */
  private draining = false;
  private readonly refused: RefusedPeers | undefined;

  constructor(
    private readonly ctx: ActorContext<CoordMsg>,
    private readonly options: CoordinatorActorOptions,
    private readonly store: CoordinatorStore | undefined,
    recovery: CoordinatorRecovery,
    registered: readonly string[],
  ) {
    const { cluster, remoting } = options;
    this.selfId = actorIdOf(remoting, ctx.self as ActorRef<never>);
    const strategy = adaptAllocationStrategy(
      options.strategy,
      () => ctx.self.tell({ type: "shardkit.coordinator.allocation-retry" }),
      (operation, error) =>
        ctx.log.warn(`allocation strategy ${operation} failed`, {
          type: options.typeName,
          error: String(error),
        }),
    );
    this.machine = new CoordinatorMachine({
      self: this.selfId,
      strategy,
      recovery,
      settings: options.settings,
      role: options.role,
      registered,
    });
    this.ids = new ActorIdRefs(remoting);
    this.driver = new MachineDriver(this.machine, () => ctx.now(), this.performers());
    this.handlers = { ...this.regionHandlers(), ...this.selfHandlers() };
    const members = () => ctx.self.tell({ type: "shardkit.coordinator.members" });
    const sub = cluster.subscribe(members);
    // Leased shards: a member whose port refuses connections counts as unreachable here
    // (refused-peers.ts), so its shards move before the failure detector notices.
    const refused = this.machine.settings.shardsLeased
      ? new RefusedPeers(remoting, members)
      : undefined;
    this.refused = refused;
    this.unsubscribe = () => {
      sub.dispose();
      refused?.dispose();
    };
    this.feedMembers();
    ctx.timers.startTimerWithFixedDelay(
      "rebalance",
      { type: "shardkit.coordinator.rebalance" },
      this.machine.settings.rebalanceIntervalMs,
    );
  }

  dispose(): void {
    this.unsubscribe();
  }

  get registeredRegions(): readonly string[] {
    return this.machine.registeredRegions;
  }

  receive(m: CoordMsg): Behavior<CoordMsg> | undefined {
    if (!this.draining) {
      dispatch(this.handlers, m);
      return undefined;
    }
    // Stopping: only the writes matter (regions retry the rest with the next coordinator).
    // A batch written is fed (the machine announces what is now durable and writes what
    // it had decided meanwhile); a failed one is not retried: the successor loads what
    // the store holds.
    if (m.type === "shardkit.coordinator.persisted") {
      dispatch(this.handlers, m);
      return this.machine.batchInFlight === undefined ? Behaviors.stopped : undefined;
    }
    const over =
      m.type === "shardkit.coordinator.persist-failed" ||
      m.type === "shardkit.coordinator.drain-timeout";
    return over ? Behaviors.stopped : undefined;
  }

  /**
   * The singleton stops this instance with a PoisonPill (hand-over, leaving, downed). With
   * a write in flight it stops only once its writes ended (the one in flight and those of
   * the events it had decided meanwhile), so the next coordinator, which starts when this
   * one has terminated, loads every event this one wrote: otherwise a write could land
   * after the successor loaded the journal, and the successor would go on from a stale
   * state (a region that stopped still holding shards, say) until its own first write
   * collided (JournalConflictError). Bounded by `handOffTimeoutMs`; a write still open
   * then is fenced by the journal's sequence numbers as before.
   */
  onPoisonPill(): Behavior<CoordMsg> | undefined {
    const batch = this.machine.batchInFlight;
    if (this.store === undefined || batch === undefined) return Behaviors.stopped;
    if (this.draining) return undefined;
    this.draining = true;
    this.ctx.log.info("stopping once the write in flight ended", {
      type: this.options.typeName,
      batch,
    });
    this.ctx.timers.cancelAll();
    this.ctx.timers.startSingleTimer(
      "drain-timeout",
      { type: "shardkit.coordinator.drain-timeout" },
      this.machine.settings.handOffTimeoutMs,
    );
    return undefined;
  }

  private performers(): Performers<CoordinatorOutput> {
    const { ctx, options, store } = this;
    return {
      send: (o) =>
        this.ids
          .refOf(o.to)
          ?.tell({ type: "shardkit.from-coordinator", from: this.selfId, cmd: o.message }),
      // Regions recovery keeps no store: acknowledge on the next turn, after the outputs
      // of this step (persist-before-announce holds: announcements are released only
      // while handling `persisted`).
      persist: (o) => {
        const { batchId } = o;
        if (store === undefined) ctx.self.tell({ type: "shardkit.coordinator.persisted", batchId });
        else
          persistThenAck<CoordMsg>(
            ctx.self,
            () => store.persist(o.events),
            () => ({ type: "shardkit.coordinator.persisted", batchId }),
            (error) => ({ type: "shardkit.coordinator.persist-failed", batchId, error }),
          );
      },
      "save-snapshot": (o) => {
        store?.saveSnapshot(o.snapshot).catch((error: unknown) =>
          ctx.log.warn("saving a coordinator snapshot failed", {
            type: options.typeName,
            error: String(error),
          }),
        );
      },
      ...timerPerformers<CoordMsg>(ctx.timers, (key) => ({
        type: "shardkit.coordinator.timer",
        key,
      })),
      log: (o) =>
        logOutput(ctx.log, o.level, o.message, {
          type: options.typeName,
          event: o.event,
          ...o.fields,
        }),
    };
  }

  /** What regions (and queries) send the coordinator. */
  private regionHandlers(): Handlers<ShardingMsg> {
    const ignore = () => {};
    return {
      "shardkit.to-coordinator": (m) => {
        const { cmd } = m;
        if (cmd.type === "shard-stopped") this.feedHandOffEnd(cmd.shard, cmd, "completed");
        // a region stopping, or a new incarnation replacing a removed one, ends its hand-offs
        else if (cmd.type === "region-stopped") this.feedWatchingHandOffs(cmd, "region-stopped");
        else if (cmd.type === "register") this.feedWatchingHandOffs(cmd, "member-removed");
        else this.driver.feed(cmd);
      },
      "shardkit.identify-coordinator": (m) =>
        m.replyTo.tell({ type: "shardkit.coordinator-is", id: this.selfId }),
      "shardkit.get-regions": (m) =>
        m.replyTo.tell(this.machine.view().regions.map((r) => r.region)),
      "shardkit.get-hand-offs": (m) =>
        m.replyTo.tell(
          this.machine.view().handOffs.map((h) => ({
            shardId: h.shard,
            fromRegion: h.owner,
            reason: h.reason,
            phase: h.phase,
            startedAtMs: h.startedAtMs,
          })),
        ),
      "shardkit.from-coordinator": ignore,
      "shardkit.coordinator-is": ignore,
      "shardkit.relay-to-coordinator": ignore,
    };
  }

  /** The coordinator's own messages (loading messages of an earlier phase are ignored). */
  private selfHandlers(): Handlers<CoordSelfMsg> {
    const feed = (input: CoordinatorInput) => this.driver.feed(input);
    const ignore = () => {};
    return {
      "shardkit.coordinator.members": () => this.feedMembers(),
      "shardkit.coordinator.timer": (m) => {
        const timer = parseCoordinatorTimer(m.key);
        if (timer?.kind === "hand-off")
          this.feedHandOffEnd(timer.shard, { type: "timer", key: m.key }, "timed-out");
        else if (timer?.kind === "region-removal")
          this.feedWatchingHandOffs({ type: "timer", key: m.key }, "member-removed");
        else if (timer?.kind === "unreachable-move")
          this.feedWatchingHandOffs({ type: "timer", key: m.key }, "member-unreachable");
        else feed({ type: "timer", key: m.key });
      },
      "shardkit.coordinator.rebalance": () => feed({ type: "rebalance-tick" }),
      "shardkit.coordinator.allocation-retry": () => feed({ type: "allocation-retry" }),
      "shardkit.coordinator.persisted": (m) => feed({ type: "persisted", batchId: m.batchId }),
      "shardkit.coordinator.persist-failed": (m) => {
        if (m.error instanceof JournalConflictError) throw m.error; // restart and reload
        feed({ type: "persist-failed", batchId: m.batchId, reason: String(m.error) });
      },
      "shardkit.coordinator.loaded": ignore,
      "shardkit.coordinator.load-failed": ignore,
      "shardkit.coordinator.load-retry": ignore,
      "shardkit.coordinator.drain-timeout": ignore,
    };
  }

  /**
   * Feeds `input` (ShardStopped, or the hand-off timer of `shard`), which may end the
   * hand-off of `shard`: with a lifecycle listener, tells it how the hand-off ended and
   * how long it took. The machine decides; this only compares its hand-off record of the
   * shard before and after (once per hand-off, never per message).
   */
  private feedHandOffEnd(
    shard: string,
    input: CoordinatorInput,
    ending: "completed" | "timed-out",
  ): void {
    const { lifecycle } = this.options;
    const before = lifecycle === undefined ? undefined : handOffOf(this.machine, shard);
    this.driver.feed(input);
    if (before === undefined || lifecycle === undefined) return;
    if (handOffOf(this.machine, shard)?.id === before.id) return; // still running
    if (ending === "completed")
      lifecycle.handOffCompleted(shard, before.reason, this.ctx.now() - before.startedAtMs);
    else lifecycle.handOffTimedOut(shard, before.reason);
  }

  /**
   * Feeds `input`, which may end hand-offs without finishing them (the old home's region is
   * gone): with a lifecycle listener, tells it each hand-off in progress before that is no
   * longer (or another attempt) after, as abandoned for `cause`. Only for the rare inputs
   * that can do so (membership, region termination, registration, their timers); nothing
   * is compared when no hand-off runs.
   */
  private feedWatchingHandOffs(input: CoordinatorInput, cause: HandOffAbandonCause): void {
    const { lifecycle } = this.options;
    if (lifecycle === undefined || this.machine.handOffCount === 0) {
      this.driver.feed(input);
      return;
    }
    const before = this.machine.handOffsInProgress();
    this.driver.feed(input);
    for (const h of before)
      if (this.machine.handOffIdOf(h.shard) !== h.id)
        lifecycle.handOffAbandoned(h.shard, h.reason, cause);
  }

  /** Feeds the current membership, then a region-terminated per region of a removed member. */
  private feedMembers(): void {
    const st = this.options.cluster.state;
    const unreachable = new Set(st.unreachable.map((m) => uniqueAddressToString(m.uniqueAddress)));
    const members: CoordinatorMember[] = st.members.map((m) => {
      const address = `${m.uniqueAddress.address.host}:${m.uniqueAddress.address.port}`;
      return {
        uniqueAddress: uniqueAddressToString(m.uniqueAddress),
        address,
        status: m.status,
        appVersion: m.appVersion,
        reachable:
          !unreachable.has(uniqueAddressToString(m.uniqueAddress)) &&
          this.refused?.has(address) !== true,
        roles: m.roles,
      };
    });
    const now = new Set(members.map((m) => m.uniqueAddress));
    const removed = [...this.knownMembers].filter((k) => !now.has(k));
    this.knownMembers = now;
    const recent = this.options.removals?.recent();
    // leased shards of an unreachable member move at once (unreachableMoveAfterMs 0)
    this.feedWatchingHandOffs(
      recent === undefined
        ? { type: "membership", members }
        : { type: "membership", members, removed: recent },
      "member-unreachable",
    );
    for (const k of removed)
      for (const region of regionsOn(this.machine, k))
        this.feedWatchingHandOffs({ type: "region-terminated", region }, "member-removed");
  }
}

/** The hand-off of `shard` in progress, if any. */
function handOffOf(machine: CoordinatorMachine, shard: string) {
  return machine.view().handOffs.find((h) => h.shard === shard);
}

/** Regions registered from the member `uniqueAddress` (by the registration's member field). */
function regionsOn(machine: CoordinatorMachine, uniqueAddress: string): string[] {
  const v = machine.view();
  return v.regions.filter((r) => r.member === uniqueAddress).map((r) => r.region);
}
