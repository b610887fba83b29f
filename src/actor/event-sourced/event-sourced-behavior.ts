/**
 * EventSourcedBehavior: an actor whose state is the fold of its persisted events.
 *
 * Lifecycle of one incarnation:
 *
 * 1. Recovery (started in setup, via pipeToSelf): load the latest snapshot (when a
 *    snapshot store and codec are given), read the highest sequence number, replay the
 *    events after the snapshot through the event handler. Commands arriving meanwhile
 *    are stashed (at most `recoveryStashMax`; one more fails the entity with
 *    StashOverflowError) and processed in arrival order once recovery completes.
 * 2. Running: each command goes to the command handler, which returns an Effect. With
 *    events, the entity appends them at `seqNr + 1` and stashes every further command
 *    until the append settles; only then are the events applied and the side effects
 *    (replies!) run, so nothing is ever replied before the events are durable.
 *    Every `snapshotAfter` events a snapshot is saved (in the background; a failed save
 *    is logged and otherwise ignored).
 * 3. Stopping: a PoisonPill (the default stop of a sharded entity at hand-off and
 *    passivation, see src/cluster/sharding/shard-actor.ts) is taken in mailbox order and
 *    waits like a command: while recovering or while an append is in flight it is
 *    stashed, so the append ends and its replies go out before the entity stops, and the
 *    commands that came before it are handled first. Commands after it become dead
 *    letters. (`ctx.stop` from outside stops at once: the reply of an append in flight
 *    is lost, though the append may still complete.)
 * 4. Failure: a recovery failure (EventSourcedRecoveryError) or a failed append
 *    (EventSourcedPersistError) fails the entity; it is supervised with
 *    restartWithBackoff, so it recovers again after the backoff. Buffered commands are
 *    put back in the mailbox first, so they survive the restart. A JournalConflictError
 *    (another incarnation wrote the same persistenceId) or a FencedWriteError (with
 *    `fence`: another node holds the shard's lease now; nothing was written) stops the
 *    entity for good, whatever the backoff settings: it must not fight the other writer.
 *
 * Shape (docs/architecture.md, "One driver shape"): the decisions of these steps are
 * pure functions in event-sourced-decisions.ts; one EventSourcedDriver per incarnation
 * performs them, with a handler table for the journal's and stores' results and a table
 * for an effect's side effects.
 *
 * The behavior uses the actor's own stash for its buffering; the command handler
 * stashes through `Effect.stash()` instead of `ctx.stash`. Do not spawn it with
 * `allowConcurrentAsync` (it does not await in handlers, so this only matters for
 * custom code run from side effects).
 */
import { ConfigError, StashOverflowError } from "../../base/errors.js";
import { type Schema, validateSync } from "../../base/schema.js";
import type { Journal, WriteFence } from "../../ports/journal.js";
import type { SnapshotStore } from "../../ports/snapshot-store.js";
import type { ActorContext } from "../actor-context.js";
import { PoisonPill } from "../actor-ref.js";
import { type Behavior, Behaviors, type StashBuffer } from "../behavior.js";
import { dispatch, type Handlers } from "../machine-driver.js";
import type { Signal } from "../signals.js";
import { type BackoffOptions, SupervisorStrategy } from "../supervision.js";
import type { Effect, SideEffect } from "./effect.js";
import {
  EventSourcedPersistError,
  EventSourcedRecoveryError,
  EventValidationError,
} from "./errors.js";
import {
  admitCommand,
  type EventSourcedPhase,
  effectPlan,
  journalEventsOf,
  persistFailureVerdict,
  poisonPillDecision,
  snapshotDue,
} from "./event-sourced-decisions.js";

/** Turns events (or snapshots) into the `{ serializerId, bytes }` the stores keep, and back. */
export interface EventCodec<T> {
  encode(value: T): { readonly serializerId: number; readonly bytes: Uint8Array };
  decode(serializerId: number, bytes: Uint8Array): T;
}
/** Codec of the state for snapshots. */
export type SnapshotCodec<S> = EventCodec<S>;

export interface EventSourcedOptions<C, E, S> {
  /** Key of the entity's events and snapshots; see persistenceIdOf for the entity format. */
  readonly persistenceId: string;
  /** State before the first event. Handlers must treat it as immutable (it is reused on restart). */
  readonly emptyState: S;
  /** Decides what a command does. Must not change `state`; must not use `ctx.stash`. */
  readonly commandHandler: (state: S, command: C, ctx: ActorContext<C>) => Effect<E, S>;
  /** Pure: the state after `event`. Also used during recovery. */
  readonly eventHandler: (state: S, event: E) => S;
  readonly journal: Journal;
  /**
   * The fencing token every append carries (sharded entities: `ctx.fence` of the
   * EntityContext, set when the type runs with shard leases). The journal refuses an
   * append once it has seen a newer token for the key; the entity then stops. Default:
   * none (no fencing).
   */
  readonly fence?: WriteFence;
  readonly eventCodec: EventCodec<E>;
  /**
   * A Standard Schema (zod, valibot, ...) every recovered event must satisfy; its output
   * is what the event handler sees. A mismatch fails recovery with EventValidationError,
   * naming the persistenceId and the sequence number. Default: no check.
   */
  readonly eventSchema?: Schema<E>;
  /** Snapshot store; used (for recovery and saving) only together with `snapshotCodec`. */
  readonly snapshots?: SnapshotStore;
  readonly snapshotCodec?: SnapshotCodec<S>;
  /** Save a snapshot whenever the sequence number crosses a multiple of this. Default: never. */
  readonly snapshotAfter?: number;
  /** Commands stashed while recovering, at most. Default: the actor's stash capacity. */
  readonly recoveryStashMax?: number;
  /** Called in the actor once recovery completed, before any command is handled. */
  readonly onRecoveryCompleted?: (state: S, ctx: ActorContext<C>) => void;
  /** Called in the actor when it stops for good (not on a restart), with the last state. */
  readonly onPostStop?: (state: S) => void;
  /** Tags stored with each event. Default none. */
  readonly tagger?: (event: E) => readonly string[];
  /**
   * Timestamp of events and snapshots, ms since the epoch. The actor layer has no wall
   * clock, so pass one in production; the default is the node's monotonic clock.
   */
  readonly timestampMs?: () => number;
  /** Restart backoff after a recovery or persist failure. Default 200 ms .. 10 s, jitter 0.2. */
  readonly backoff?: BackoffOptions;
  /** Give up (stop) after this many restarts within `withinMs`. Default unlimited. */
  readonly maxRestarts?: number;
  readonly withinMs?: number;
}

export const defaultEventSourcedBackoff: BackoffOptions = Object.freeze({
  minBackoffMs: 200,
  maxBackoffMs: 10_000,
  randomFactor: 0.2,
});

/** What an incarnation tells itself (results of the journal and stores). */
type EsSignalBody =
  | { readonly type: "recovered"; readonly state: unknown; readonly seqNr: number }
  | { readonly type: "recovery-failed"; readonly error: unknown }
  | { readonly type: "persisted" }
  | { readonly type: "persist-failed"; readonly error: unknown }
  | { readonly type: "snapshot-failed"; readonly seqNr: number; readonly error: unknown }
  | { readonly type: "snapshot-saved" };

/**
 * Self-messages of the behavior; never visible to the command handler. `incarnation`
 * tells a result of the current incarnation from one of an earlier one (dropped).
 */
class EsSignal {
  constructor(
    readonly incarnation: object,
    readonly body: EsSignalBody,
  ) {}
}

interface InFlight<E, S> {
  readonly effect: Effect<E, S>;
  readonly firstSeqNr: number;
}

function checkPositiveInt(key: string, v: number | undefined): void {
  if (v !== undefined && !(Number.isSafeInteger(v) && v >= 1))
    throw new ConfigError(key, v, "an integer >= 1");
}

export const EventSourcedBehavior = {
  /** The behavior of an event-sourced entity (already supervised with restartWithBackoff). */
  create<C, E, S>(options: EventSourcedOptions<C, E, S>): Behavior<C> {
    const o = options;
    if (typeof o.persistenceId !== "string" || o.persistenceId.length === 0)
      throw new ConfigError("persistenceId", o.persistenceId, "a non-empty string");
    checkPositiveInt("snapshotAfter", o.snapshotAfter);
    checkPositiveInt("recoveryStashMax", o.recoveryStashMax);
    if (
      o.snapshotAfter !== undefined &&
      (o.snapshots === undefined || o.snapshotCodec === undefined)
    )
      throw new ConfigError(
        "snapshotAfter",
        o.snapshotAfter,
        "set together with snapshots and snapshotCodec",
      );
    const strategy = SupervisorStrategy.restartWithBackoff(
      o.backoff ?? defaultEventSourcedBackoff,
      {
        ...(o.maxRestarts === undefined ? {} : { maxRestarts: o.maxRestarts }),
        ...(o.withinMs === undefined ? {} : { withinMs: o.withinMs }),
      },
    );
    return Behaviors.supervise(
      Behaviors.setup<C | EsSignal>((ctx) => new EventSourcedDriver(o, ctx).behavior()),
      strategy,
    ) as Behavior<C>;
  },
} as const;

type Next<C> = Behavior<C | EsSignal>;

/** One performer per side-effect kind; each answers whether the entity stops afterwards. */
type SideEffectPerformers<S> = {
  readonly [K in SideEffect<S>["k"]]: (se: Extract<SideEffect<S>, { readonly k: K }>) => boolean;
};

/**
 * One incarnation of an event-sourced entity (the module comment's lifecycle), recreated
 * on every restart. What a command, a PoisonPill, an effect or a failed append does is
 * decided in event-sourced-decisions.ts; this driver performs it with the actor's stash,
 * the journal and the snapshot store. Results of the journal and stores come back as
 * EsSignal bodies through the `signals` table; an effect's side effects run through the
 * `sideEffects` table (docs/architecture.md, "One driver shape").
 */
class EventSourcedDriver<C, E, S> {
  private readonly pid: string;
  private readonly userCtx: ActorContext<C>;
  private readonly token = {};
  private readonly now: () => number;
  private readonly snapshotting: boolean;
  private readonly stash: StashBuffer<C | EsSignal>;
  private readonly recoveryStashMax: number;
  private readonly signals: Handlers<EsSignalBody, Next<C>>;
  private readonly sideEffects: SideEffectPerformers<S>;
  private state: S;
  private seqNr = 0;
  private phase: EventSourcedPhase = "recovering";
  private inFlight: InFlight<E, S> | null = null;
  /** Commands set aside by Effect.stash(). */
  private userStash: C[] = [];
  /** A PoisonPill came while the stash was full: stop at the next idle point. */
  private stopWhenIdle = false;
  /** When recovery started; only with a recovery observer (the metrics). */
  private readonly recoveryStartedMs: number | undefined;

  constructor(
    private readonly o: EventSourcedOptions<C, E, S>,
    private readonly ctx: ActorContext<C | EsSignal>,
  ) {
    this.pid = o.persistenceId;
    this.userCtx = ctx as unknown as ActorContext<C>;
    this.now = o.timestampMs ?? (() => Math.floor(ctx.now()));
    this.snapshotting = o.snapshots !== undefined && o.snapshotCodec !== undefined;
    this.stash = ctx.stash;
    this.recoveryStashMax = Math.min(
      o.recoveryStashMax ?? this.stash.capacity,
      this.stash.capacity,
    );
    this.state = o.emptyState;
    this.signals = this.signalHandlers();
    this.sideEffects = this.sideEffectPerformers();
    this.recoveryStartedMs = ctx.system.core.recoveryObserver === undefined ? undefined : ctx.now();
    ctx.pipeToSelf(recover(o), (r) =>
      r.ok
        ? this.signal({ type: "recovered", state: r.value.state, seqNr: r.value.seqNr })
        : this.signal({ type: "recovery-failed", error: r.error }),
    );
  }

  behavior(): Next<C> {
    const receive = Behaviors.receive<C | EsSignal>(
      (_ctx, msg) => this.receive(msg),
      (_ctx, signal) => this.onLifecycle(signal),
    );
    return { ...receive, onPoisonPill: () => this.onPoisonPill() };
  }

  private signal(body: EsSignalBody): EsSignal {
    return new EsSignal(this.token, body);
  }

  private receive(msg: C | EsSignal): Next<C> {
    if (msg instanceof EsSignal)
      return msg.incarnation === this.token ? dispatch(this.signals, msg.body) : Behaviors.same;
    const stash = this.stash;
    const admission = admitCommand(this.phase, stash.size, this.recoveryStashMax, stash.capacity);
    switch (admission.kind) {
      case "handle":
        return this.handleCommand(msg);
      case "stash":
        stash.stash(msg);
        return Behaviors.same;
      case "overflow":
        stash.clear();
        throw new StashOverflowError(this.ctx.path.toString(), admission.limit);
    }
  }

  private handleCommand(command: C): Next<C> {
    const effect = this.o.commandHandler(this.state, command, this.userCtx);
    switch (effectPlan(effect)) {
      case "unhandled":
        return Behaviors.unhandled;
      case "stash":
        if (this.userStash.length >= this.stash.capacity)
          throw new StashOverflowError(this.ctx.path.toString(), this.stash.capacity);
        this.userStash.push(command);
        return Behaviors.same;
      case "side-effects":
        return this.runSideEffects(effect);
      case "persist":
        this.persist(effect);
        return Behaviors.same;
    }
  }

  /** Appends the effect's events; the outcome comes back as `persisted` / `persist-failed`. */
  private persist(effect: Effect<E, S>): void {
    const firstSeqNr = this.seqNr + 1;
    const codec = this.o.eventCodec;
    const events = journalEventsOf(
      effect.events,
      (e) => codec.encode(e),
      this.o.tagger,
      this.now(),
    );
    this.inFlight = { effect, firstSeqNr };
    this.phase = "persisting";
    this.ctx.pipeToSelf(this.o.journal.append(this.pid, firstSeqNr, events, this.o.fence), (r) =>
      r.ok
        ? this.signal({ type: "persisted" })
        : this.signal({ type: "persist-failed", error: r.error }),
    );
  }

  /** The append is durable: apply the events, maybe snapshot, unstash, run the side effects. */
  private onPersisted(): Next<C> {
    const { effect, firstSeqNr } = this.inFlight as InFlight<E, S>;
    this.inFlight = null;
    this.phase = "running";
    const before = this.seqNr;
    for (const e of effect.events) this.state = this.o.eventHandler(this.state, e);
    this.seqNr = firstSeqNr + effect.events.length - 1;
    if (this.snapshotting && snapshotDue(before, this.seqNr, this.o.snapshotAfter))
      this.saveSnapshot();
    this.stash.unstashAll();
    const next = this.runSideEffects(effect);
    return this.stopWhenIdle ? Behaviors.stopped : next;
  }

  private onPersistFailed(error: unknown): Next<C> {
    const first = (this.inFlight as InFlight<E, S>).firstSeqNr;
    this.inFlight = null;
    this.phase = "running";
    const verdict = persistFailureVerdict(error);
    if (verdict.kind === "fail") throw new EventSourcedPersistError(this.pid, first, error);
    // Another incarnation wrote, or another holder has the shard: stop (failed, with the
    // typed error), never restart.
    this.ctx.log.error(
      verdict.reason === "fenced"
        ? "fenced write: another node holds this entity's shard, stopping"
        : "journal conflict: another incarnation wrote, stopping",
      { persistenceId: this.pid, seqNr: first },
    );
    return Behaviors.supervise(
      Behaviors.setup<C | EsSignal>(() => {
        throw error;
      }),
      SupervisorStrategy.stop(),
    );
  }

  private onRecovered(state: S, seqNr: number): Next<C> {
    this.state = state;
    this.seqNr = seqNr;
    this.phase = "running";
    this.reportRecovery("recovered");
    this.o.onRecoveryCompleted?.(this.state, this.userCtx);
    this.stash.unstashAll();
    return this.stopWhenIdle ? Behaviors.stopped : Behaviors.same;
  }

  private reportRecovery(outcome: "recovered" | "failed"): void {
    const observer = this.ctx.system.core.recoveryObserver;
    if (observer !== undefined && this.recoveryStartedMs !== undefined)
      observer(this.ctx.now() - this.recoveryStartedMs, outcome, this.ctx.self.path);
  }

  private signalHandlers(): Handlers<EsSignalBody, Next<C>> {
    return {
      recovered: (b) => this.onRecovered(b.state as S, b.seqNr),
      "recovery-failed": (b) => {
        this.reportRecovery("failed");
        throw new EventSourcedRecoveryError(this.pid, b.error);
      },
      persisted: () => this.onPersisted(),
      "persist-failed": (b) => this.onPersistFailed(b.error),
      "snapshot-failed": (b) => {
        this.ctx.log.warn("snapshot save failed", {
          persistenceId: this.pid,
          seqNr: b.seqNr,
          error: b.error,
        });
        return Behaviors.same;
      },
      "snapshot-saved": () => Behaviors.same,
    };
  }

  /** PoisonPill: stop now when idle, else wait in the stash (in order) like a command. */
  private onPoisonPill(): Next<C> {
    switch (poisonPillDecision(this.phase, this.stash.isFull)) {
      case "stop":
        return Behaviors.stopped;
      case "stop-when-idle":
        this.stopWhenIdle = true;
        return Behaviors.same;
      case "stash":
        this.stash.stash(PoisonPill as unknown as C);
        return Behaviors.same;
    }
  }

  private runSideEffects(effect: Effect<E, S>): Next<C> {
    let stop = false;
    for (const se of effect.sideEffects)
      if ((this.sideEffects[se.k] as (se: SideEffect<S>) => boolean)(se)) stop = true;
    return stop ? Behaviors.stopped : Behaviors.same;
  }

  private sideEffectPerformers(): SideEffectPerformers<S> {
    return {
      reply: (se) => {
        se.ref.tell(se.make(this.state));
        return false;
      },
      run: (se) => {
        se.fn(this.state);
        return false;
      },
      unstashAll: () => {
        this.unstashUser();
        return false;
      },
      stop: () => true,
    };
  }

  private saveSnapshot(): void {
    const at = this.seqNr;
    const payload = (this.o.snapshotCodec as SnapshotCodec<S>).encode(this.state);
    const store = this.o.snapshots as SnapshotStore;
    this.ctx.pipeToSelf(store.save(this.pid, at, this.now(), payload), (r) =>
      r.ok
        ? this.signal({ type: "snapshot-saved" })
        : this.signal({ type: "snapshot-failed", seqNr: at, error: r.error }),
    );
  }

  /** Puts user-stashed commands in front of the mailbox (the actor's stash must be empty). */
  private unstashUser(): void {
    if (this.userStash.length === 0) return;
    const items = this.userStash;
    this.userStash = [];
    for (const m of items) this.stash.stash(m);
    this.stash.unstashAll();
  }

  private onLifecycle(signal: Signal): Next<C> {
    if (signal.type === "PostStop") {
      this.dropAll();
      this.o.onPostStop?.(this.state);
    } else if (signal.type === "PreRestart") {
      // Before a restart: keep every buffered command (user-stashed first) in the mailbox.
      this.stash.unstashAll();
      this.unstashUser();
    } else return Behaviors.unhandled;
    return Behaviors.same;
  }

  /** On stop: every buffered or stashed command becomes a dead letter. */
  private dropAll(): void {
    this.stash.clear();
    const items = this.userStash;
    this.userStash = [];
    for (const m of items) this.stash.stash(m);
    this.stash.clear();
  }
}

function checkEvent<C, E, S>(o: EventSourcedOptions<C, E, S>, seqNr: number, event: E): E {
  if (o.eventSchema === undefined) return event;
  const r = validateSync(o.eventSchema, event, `the events of ${o.persistenceId}`);
  if (!r.ok) throw new EventValidationError(o.persistenceId, seqNr, r.issues);
  return r.value;
}

/** Snapshot + replay, outside the actor; the result comes back as a message. */
async function recover<C, E, S>(
  o: EventSourcedOptions<C, E, S>,
): Promise<{ state: S; seqNr: number }> {
  const pid = o.persistenceId;
  let state = o.emptyState;
  let next = 1;
  if (o.snapshots !== undefined && o.snapshotCodec !== undefined) {
    const snap = await o.snapshots.loadLatest(pid);
    if (snap !== undefined) {
      state = o.snapshotCodec.decode(snap.serializerId, snap.bytes);
      next = snap.sequenceNr + 1;
    }
  }
  const highest = await o.journal.highestSequenceNr(pid);
  while (next <= highest) {
    const batch = await o.journal.read(pid, next, highest);
    if (batch.length === 0) break;
    for (const pe of batch) {
      const decoded = o.eventCodec.decode(pe.serializerId, pe.bytes);
      state = o.eventHandler(state, checkEvent(o, pe.sequenceNr, decoded));
      next = pe.sequenceNr + 1;
    }
  }
  return { state, seqNr: Math.max(highest, next - 1) };
}
