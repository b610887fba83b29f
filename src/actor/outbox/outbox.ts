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

export const Outbox = {
  /** The behavior of a persistent outbox (supervised like every EventSourcedBehavior). */
  behavior<P>(options: OutboxOptions<P>): Behavior<OutboxCommand<P>> {
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
    const snapshotAfter = sa ?? (snapshotting ? OUTBOX_SNAPSHOT_AFTER_DEFAULT : undefined);
    const pid = options.persistenceId;
    const emptyState = emptyOutboxState<P>();

    return Behaviors.setup<Cmd<P>>((ctx) => {
      const planner = new RedeliveryPlanner(settings);
      const confirmTo = ctx.self as ActorRef<OutboxConfirm>;
      /** Time the tick timer is set for, if it is. */
      let wakeAtMs: number | undefined;

      function attempt(entry: OutboxEntry<P>, attemptNr: number): void {
        const deliver = destinations.get(entry.destination);
        if (deliver === undefined) {
          ctx.log.warn("outbox destination is not configured; message kept", {
            persistenceId: pid,
            deliveryId: entry.deliveryId,
            destination: entry.destination,
          });
          return;
        }
        try {
          deliver({
            outboxId: pid,
            deliveryId: entry.deliveryId,
            destination: entry.destination,
            payload: entry.payload,
            attempt: attemptNr,
            confirmTo,
          });
        } catch (error) {
          // An attempt that failed to go out is just a lost attempt: it is retried.
          ctx.log.warn("outbox destination threw; will redeliver", {
            persistenceId: pid,
            deliveryId: entry.deliveryId,
            destination: entry.destination,
            error,
          });
        }
      }

      function schedule(): void {
        const next = planner.nextWakeAtMs();
        if (next === undefined) {
          if (wakeAtMs !== undefined) ctx.timers.cancel(TICK_KEY);
          wakeAtMs = undefined;
          return;
        }
        if (wakeAtMs !== undefined && wakeAtMs <= next) return; // fires in time (or early)
        wakeAtMs = next;
        ctx.timers.startSingleTimer(TICK_KEY, TICK, Math.max(0, Math.ceil(next - ctx.now())));
      }

      function onTick(state: OutboxState<P>): void {
        wakeAtMs = undefined;
        const plan = planner.tick(ctx.now());
        if (plan.warn.length > 0) warn(state, plan.warn);
        for (const a of plan.deliver) {
          const entry = state.unconfirmed.get(a.deliveryId);
          if (entry !== undefined) attempt(entry, a.attempt);
        }
        schedule();
      }

      function warn(
        state: OutboxState<P>,
        list: readonly { deliveryId: number; attempt: number }[],
      ): void {
        const deliveries = list.map((w) => ({
          deliveryId: w.deliveryId,
          destination: state.unconfirmed.get(w.deliveryId)?.destination ?? "",
          attempts: w.attempt,
        }));
        ctx.log.warn("outbox messages still unconfirmed", {
          persistenceId: pid,
          count: deliveries.length,
          warnAfterAttempts: settings.warnAfterAttempts,
          deliveryIds: deliveries.slice(0, 20).map((d) => d.deliveryId),
        });
        const event: OutboxUnconfirmedWarning = {
          type: "OutboxUnconfirmedWarning",
          persistenceId: pid,
          deliveries,
        };
        ctx.system.eventStream.publish(event);
      }

      function onRecovered(state: OutboxState<P>): void {
        planner.clear();
        ctx.timers.cancel(TICK_KEY);
        wakeAtMs = undefined;
        const now = ctx.now();
        for (const id of state.unconfirmed.keys()) planner.recovered(id, now);
        schedule();
      }

      const Eff = Effect.of<OutboxEvent<P>, OutboxState<P>>();

      function handle(state: OutboxState<P>, cmd: Cmd<P>): Effect<OutboxEvent<P>, OutboxState<P>> {
        if (cmd instanceof RedeliverTick) return Eff.none().thenRun(onTick);
        switch (cmd.type) {
          case "send": {
            const replyTo = cmd.replyTo;
            const reject = (r: OutboxRejected) => Eff.none().thenRun(() => replyTo?.tell(r));
            if (!destinations.has(cmd.destination))
              return reject({
                type: "rejected",
                reason: "unknown-destination",
                destination: cmd.destination,
              });
            const unconfirmed = state.unconfirmed.size;
            if (!admitsSend(unconfirmed, settings.unconfirmedMax))
              return reject({
                type: "rejected",
                reason: "unconfirmed-max",
                unconfirmed,
                unconfirmedMax: settings.unconfirmedMax,
              });
            const deliveryId = state.nextDeliveryId;
            return Eff.persist({
              type: "sent",
              deliveryId,
              destination: cmd.destination,
              payload: cmd.payload,
            }).thenRun((s) => {
              const a = planner.firstAttempt(deliveryId, ctx.now());
              const entry = s.unconfirmed.get(deliveryId);
              if (entry !== undefined) attempt(entry, a.attempt);
              schedule();
              replyTo?.tell({ type: "accepted", deliveryId });
            });
          }
          case "confirm": {
            const id = cmd.deliveryId;
            if (!state.unconfirmed.has(id)) return Eff.none(); // already confirmed, or unknown
            return Eff.persist({ type: "confirmed", deliveryId: id }).thenRun(() => {
              planner.confirm(id);
            });
          }
          case "status":
            return Eff.none().thenRun((s) =>
              cmd.replyTo.tell({
                nextDeliveryId: s.nextDeliveryId,
                unconfirmed: [...s.unconfirmed.values()].map((e) => ({
                  ...e,
                  attempts: planner.attempts(e.deliveryId) ?? 0,
                })),
              }),
            );
          default:
            return Eff.unhandled();
        }
      }

      return EventSourcedBehavior.create<Cmd<P>, OutboxEvent<P>, OutboxState<P>>({
        persistenceId: pid,
        emptyState,
        commandHandler: handle,
        eventHandler: applyOutboxEvent,
        journal: options.journal,
        eventCodec: options.eventCodec,
        ...(options.snapshots === undefined ? {} : { snapshots: options.snapshots }),
        ...(snapshotCodec === undefined ? {} : { snapshotCodec }),
        ...(snapshotAfter === undefined ? {} : { snapshotAfter }),
        ...(options.timestampMs === undefined ? {} : { timestampMs: options.timestampMs }),
        ...(options.backoff === undefined ? {} : { backoff: options.backoff }),
        onRecoveryCompleted: (state: OutboxState<P>, _ctx: ActorContext<Cmd<P>>) =>
          onRecovered(state),
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
