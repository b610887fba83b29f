/**
 * Outbox: at-least-once delivery on top of EventSourcedBehavior.
 *
 * A `send` is persisted (event "sent") before the first delivery attempt and before the
 * sender is told its deliveryId. The message is then delivered again and again, with
 * exponential backoff, until the destination confirms it (event "confirmed"). After a
 * restart, recovery replays the events (from the latest snapshot on) and every message
 * still unconfirmed is delivered again. So every accepted message reaches its
 * destination at least once; destinations must tolerate duplicates (deduplicate by
 * `outboxId` + `deliveryId`).
 *
 * Destinations are named: `destinations` maps a name to a sender function
 * `(delivery) => void`, and the events store only the name. The functions are given
 * again each time the outbox is created, so they can address whatever is current then:
 * a sharded entity (`entityRefFor(...).tell`), a singleton proxy, an actor ref looked
 * up at start. (Actor refs are deliberately not stored: a stored ref names one
 * incarnation of an actor, which is gone after a restart.)
 *
 * When to redeliver is decided by the RedeliveryPlanner (pure, time passed in); this
 * file only drives it with one actor timer.
 */
import { ConfigError } from "../../base/errors.js";
import type { Journal } from "../../ports/journal.js";
import type { SnapshotStore } from "../../ports/snapshot-store.js";
import type { ActorContext } from "../actor-context.js";
import type { ActorRef } from "../actor-ref.js";
import { type Behavior, Behaviors } from "../behavior.js";
import { Effect } from "../event-sourced/effect.js";
import { type EventCodec, EventSourcedBehavior } from "../event-sourced/event-sourced-behavior.js";
import type { BackoffOptions } from "../supervision.js";
import { type OutboxSettings, outboxSettings } from "./outbox-settings.js";
import {
  applyOutboxEvent,
  emptyOutboxState,
  type OutboxEntry,
  type OutboxEvent,
  type OutboxSnapshot,
  type OutboxState,
  outboxSnapshotOf,
  outboxStateOf,
} from "./outbox-state.js";
import { admitsSend, RedeliveryPlanner } from "./redelivery-planner.js";

/** What a destination receives; confirm with `Outbox.confirm(delivery)`. */
export interface Delivery<P> {
  /** The outbox's persistenceId: with deliveryId, a unique key for deduplication. */
  readonly outboxId: string;
  readonly deliveryId: number;
  readonly destination: string;
  readonly payload: P;
  /** Attempt number within the current outbox incarnation, from 1. */
  readonly attempt: number;
  /** Tell it `{ type: "confirm", deliveryId }` once the message is handled. */
  readonly confirmTo: ActorRef<OutboxConfirm>;
}

/** Sends one delivery to a destination. Runs inside the outbox actor: must not block. */
export type DeliverFn<P> = (delivery: Delivery<P>) => void;

/** Persist `payload` for `destination` and deliver it until confirmed. */
export interface OutboxSend<P> {
  readonly type: "send";
  readonly destination: string;
  readonly payload: P;
  /** Told the assigned deliveryId (after the "sent" event is durable) or the rejection. */
  readonly replyTo?: ActorRef<OutboxSendReply>;
}

/** The destination handled `deliveryId`: stop redelivering it. Idempotent. */
export interface OutboxConfirm {
  readonly type: "confirm";
  readonly deliveryId: number;
}

/** Asks for the unconfirmed messages (for monitoring and tests). */
export interface OutboxGetStatus<P> {
  readonly type: "status";
  readonly replyTo: ActorRef<OutboxStatus<P>>;
}

export type OutboxCommand<P> = OutboxSend<P> | OutboxConfirm | OutboxGetStatus<P>;

export interface OutboxAccepted {
  readonly type: "accepted";
  readonly deliveryId: number;
}

/** A send that was refused; nothing was persisted or delivered. */
export type OutboxRejected =
  | {
      readonly type: "rejected";
      readonly reason: "unconfirmed-max";
      readonly unconfirmed: number;
      readonly unconfirmedMax: number;
    }
  | {
      readonly type: "rejected";
      readonly reason: "unknown-destination";
      readonly destination: string;
    };

export type OutboxSendReply = OutboxAccepted | OutboxRejected;

export interface OutboxStatus<P> {
  readonly nextDeliveryId: number;
  /** In deliveryId order; `attempts` counts the current incarnation's attempts. */
  readonly unconfirmed: readonly (OutboxEntry<P> & { readonly attempts: number })[];
}

/** Published on the event stream when messages stay unconfirmed for warnAfterAttempts attempts. */
export interface OutboxUnconfirmedWarning {
  readonly type: "OutboxUnconfirmedWarning";
  readonly persistenceId: string;
  readonly deliveries: readonly {
    readonly deliveryId: number;
    readonly destination: string;
    readonly attempts: number;
  }[];
}

export interface OutboxOptions<P> {
  /** Key of the outbox's events and snapshots. */
  readonly persistenceId: string;
  readonly journal: Journal;
  /** Codec of the events (plain data: the payload plus numbers and strings). */
  readonly eventCodec: EventCodec<OutboxEvent<P>>;
  /** Snapshot store; used together with `snapshotCodec`. */
  readonly snapshots?: SnapshotStore;
  /** Codec of the snapshots (plain data: arrays of entries). */
  readonly snapshotCodec?: EventCodec<OutboxSnapshot<P>>;
  /** Save a snapshot every this many events. Default 1 000 when snapshots are configured. */
  readonly snapshotAfter?: number;
  /** Where messages go, by name; a `send` to another name is rejected. */
  readonly destinations: Readonly<Record<string, DeliverFn<P>>>;
  readonly settings?: Partial<OutboxSettings>;
  /** Event timestamps, ms since the epoch (see EventSourcedOptions.timestampMs). */
  readonly timestampMs?: () => number;
  /** Restart backoff after a journal failure (see EventSourcedOptions.backoff). */
  readonly backoff?: BackoffOptions;
}

/** Default snapshot interval (events) when a snapshot store is given. */
export const OUTBOX_SNAPSHOT_AFTER_DEFAULT = 1_000;

/** The timer's message; handled by the driver, never visible to senders. */
class RedeliverTick {}
const TICK = new RedeliverTick();
const TICK_KEY = "outbox-redeliver";

type Cmd<P> = OutboxCommand<P> | RedeliverTick;

/** The options of an outbox, checked once (see `Outbox.behavior`). */
interface ResolvedOutbox<P> {
  readonly pid: string;
  readonly settings: OutboxSettings;
  readonly destinations: ReadonlyMap<string, DeliverFn<P>>;
  readonly snapshotCodec: EventCodec<OutboxState<P>> | undefined;
  readonly snapshotAfter: number | undefined;
}

/** @throws ConfigError naming the bad option. */
function resolveOutbox<P>(options: OutboxOptions<P>): ResolvedOutbox<P> {
  const settings = outboxSettings(options.settings);
  if (typeof options.persistenceId !== "string" || options.persistenceId.length === 0)
    throw new ConfigError("persistenceId", options.persistenceId, "a non-empty string");
  const sa = options.snapshotAfter;
  if (sa !== undefined && !(Number.isSafeInteger(sa) && sa >= 1))
    throw new ConfigError("snapshotAfter", sa, "an integer >= 1");
  const destinations = checkDestinations(options.destinations);
  const snapshotting = options.snapshots !== undefined && options.snapshotCodec !== undefined;
  const userSnapshotCodec = options.snapshotCodec;
  const snapshotCodec: EventCodec<OutboxState<P>> | undefined =
    userSnapshotCodec === undefined
      ? undefined
      : {
          encode: (s) => userSnapshotCodec.encode(outboxSnapshotOf(s)),
          decode: (id, bytes) => outboxStateOf(userSnapshotCodec.decode(id, bytes)),
        };
  if (sa !== undefined && !snapshotting)
    throw new ConfigError("snapshotAfter", sa, "set together with snapshots and snapshotCodec");
  return {
    pid: options.persistenceId,
    settings,
    destinations,
    snapshotCodec,
    snapshotAfter: sa ?? (snapshotting ? OUTBOX_SNAPSHOT_AFTER_DEFAULT : undefined),
  };
}

type OutboxEffect<P> = Effect<OutboxEvent<P>, OutboxState<P>>;

/**
 * One incarnation of an outbox: drives the RedeliveryPlanner with one timer and performs
 * its plans (deliveries, warnings). Commands map to effects in `handle`; everything that
 * happens after an event is durable runs in the effect's `thenRun`.
 */
class OutboxDriver<P> {
  private readonly planner: RedeliveryPlanner;
  private readonly confirmTo: ActorRef<OutboxConfirm>;
  private readonly Eff = Effect.of<OutboxEvent<P>, OutboxState<P>>();
  /** Time the tick timer is set for, if it is. */
  private wakeAtMs: number | undefined;

  constructor(
    private readonly ctx: ActorContext<Cmd<P>>,
    private readonly o: ResolvedOutbox<P>,
  ) {
    this.planner = new RedeliveryPlanner(o.settings);
    this.confirmTo = ctx.self as ActorRef<OutboxConfirm>;
  }

  handle(state: OutboxState<P>, cmd: Cmd<P>): OutboxEffect<P> {
    if (cmd instanceof RedeliverTick) return this.Eff.none().thenRun((s) => this.onTick(s));
    switch (cmd.type) {
      case "send":
        return this.onSend(state, cmd);
      case "confirm":
        return this.onConfirm(state, cmd.deliveryId);
      case "status":
        return this.Eff.none().thenRun((s) => cmd.replyTo.tell(this.status(s)));
      default:
        return this.Eff.unhandled();
    }
  }

  onRecovered(state: OutboxState<P>): void {
    this.planner.clear();
    this.ctx.timers.cancel(TICK_KEY);
    this.wakeAtMs = undefined;
    const now = this.ctx.now();
    for (const id of state.unconfirmed.keys()) this.planner.recovered(id, now);
    this.schedule();
  }

  private onSend(state: OutboxState<P>, cmd: OutboxSend<P>): OutboxEffect<P> {
    const { replyTo } = cmd;
    const reject = (r: OutboxRejected) => this.Eff.none().thenRun(() => replyTo?.tell(r));
    if (!this.o.destinations.has(cmd.destination))
      return reject({
        type: "rejected",
        reason: "unknown-destination",
        destination: cmd.destination,
      });
    const unconfirmed = state.unconfirmed.size;
    const unconfirmedMax = this.o.settings.unconfirmedMax;
    if (!admitsSend(unconfirmed, unconfirmedMax))
      return reject({ type: "rejected", reason: "unconfirmed-max", unconfirmed, unconfirmedMax });
    const deliveryId = state.nextDeliveryId;
    return this.Eff.persist({
      type: "sent",
      deliveryId,
      destination: cmd.destination,
      payload: cmd.payload,
    }).thenRun((s) => {
      const a = this.planner.firstAttempt(deliveryId, this.ctx.now());
      const entry = s.unconfirmed.get(deliveryId);
      if (entry !== undefined) this.attempt(entry, a.attempt);
      this.schedule();
      replyTo?.tell({ type: "accepted", deliveryId });
    });
  }

  private onConfirm(state: OutboxState<P>, id: number): OutboxEffect<P> {
    if (!state.unconfirmed.has(id)) return this.Eff.none(); // already confirmed, or unknown
    return this.Eff.persist({ type: "confirmed", deliveryId: id }).thenRun(() => {
      this.planner.confirm(id);
    });
  }

  private status(s: OutboxState<P>): OutboxStatus<P> {
    return {
      nextDeliveryId: s.nextDeliveryId,
      unconfirmed: [...s.unconfirmed.values()].map((e) => ({
        ...e,
        attempts: this.planner.attempts(e.deliveryId) ?? 0,
      })),
    };
  }

  private attempt(entry: OutboxEntry<P>, attemptNr: number): void {
    const fields = {
      persistenceId: this.o.pid,
      deliveryId: entry.deliveryId,
      destination: entry.destination,
    };
    const deliver = this.o.destinations.get(entry.destination);
    if (deliver === undefined) {
      this.ctx.log.warn("outbox destination is not configured; message kept", fields);
      return;
    }
    try {
      deliver({
        outboxId: this.o.pid,
        deliveryId: entry.deliveryId,
        destination: entry.destination,
        payload: entry.payload,
        attempt: attemptNr,
        confirmTo: this.confirmTo,
      });
    } catch (error) {
      // An attempt that failed to go out is just a lost attempt: it is retried.
      this.ctx.log.warn("outbox destination threw; will redeliver", { ...fields, error });
    }
  }

  private schedule(): void {
    const next = this.planner.nextWakeAtMs();
    if (next === undefined) {
      if (this.wakeAtMs !== undefined) this.ctx.timers.cancel(TICK_KEY);
      this.wakeAtMs = undefined;
      return;
    }
    if (this.wakeAtMs !== undefined && this.wakeAtMs <= next) return; // fires in time (or early)
    this.wakeAtMs = next;
    this.ctx.timers.startSingleTimer(TICK_KEY, TICK, Math.max(0, Math.ceil(next - this.ctx.now())));
  }

  private onTick(state: OutboxState<P>): void {
    this.wakeAtMs = undefined;
    const plan = this.planner.tick(this.ctx.now());
    if (plan.warn.length > 0) this.warn(state, plan.warn);
    for (const a of plan.deliver) {
      const entry = state.unconfirmed.get(a.deliveryId);
      if (entry !== undefined) this.attempt(entry, a.attempt);
    }
    this.schedule();
  }

  private warn(
    state: OutboxState<P>,
    list: readonly { deliveryId: number; attempt: number }[],
  ): void {
    const deliveries = list.map((w) => ({
      deliveryId: w.deliveryId,
      destination: state.unconfirmed.get(w.deliveryId)?.destination ?? "",
      attempts: w.attempt,
    }));
    this.ctx.log.warn("outbox messages still unconfirmed", {
      persistenceId: this.o.pid,
      count: deliveries.length,
      warnAfterAttempts: this.o.settings.warnAfterAttempts,
      deliveryIds: deliveries.slice(0, 20).map((d) => d.deliveryId),
    });
    const event: OutboxUnconfirmedWarning = {
      type: "OutboxUnconfirmedWarning",
      persistenceId: this.o.pid,
      deliveries,
    };
    this.ctx.system.eventStream.publish(event);
  }
}

export const Outbox = {
  /** The behavior of a persistent outbox (supervised like every EventSourcedBehavior). */
  behavior<P>(options: OutboxOptions<P>): Behavior<OutboxCommand<P>> {
    const o = resolveOutbox(options);
    return Behaviors.setup<Cmd<P>>((ctx) => {
      const driver = new OutboxDriver(ctx, o);
      return EventSourcedBehavior.create<Cmd<P>, OutboxEvent<P>, OutboxState<P>>({
        persistenceId: o.pid,
        emptyState: emptyOutboxState<P>(),
        commandHandler: (state, cmd) => driver.handle(state, cmd),
        eventHandler: applyOutboxEvent,
        journal: options.journal,
        eventCodec: options.eventCodec,
        ...(options.snapshots === undefined ? {} : { snapshots: options.snapshots }),
        ...(o.snapshotCodec === undefined ? {} : { snapshotCodec: o.snapshotCodec }),
        ...(o.snapshotAfter === undefined ? {} : { snapshotAfter: o.snapshotAfter }),
        ...(options.timestampMs === undefined ? {} : { timestampMs: options.timestampMs }),
        ...(options.backoff === undefined ? {} : { backoff: options.backoff }),
        onRecoveryCompleted: (state: OutboxState<P>) => driver.onRecovered(state),
      });
    }) as Behavior<unknown> as Behavior<OutboxCommand<P>>;
  },

  /** Confirms a delivery to its outbox (what a destination does once it handled it). */
  confirm(delivery: Delivery<unknown>): void {
    delivery.confirmTo.tell({ type: "confirm", deliveryId: delivery.deliveryId });
  },
} as const;

function checkDestinations<P>(
  destinations: Readonly<Record<string, DeliverFn<P>>>,
): ReadonlyMap<string, DeliverFn<P>> {
  if (typeof destinations !== "object" || destinations === null)
    throw new ConfigError("destinations", destinations, "an object of sender functions by name");
  const out = new Map<string, DeliverFn<P>>();
  for (const [name, fn] of Object.entries(destinations)) {
    if (name.length === 0 || typeof fn !== "function")
      throw new ConfigError(`destinations.${name}`, fn, "a function (delivery) => void");
    out.set(name, fn);
  }
  if (out.size === 0)
    throw new ConfigError("destinations", destinations, "at least one named destination");
  return out;
}
