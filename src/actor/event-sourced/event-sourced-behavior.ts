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
 * The behavior uses the actor's own stash for its buffering; the command handler
 * stashes through `Effect.stash()` instead of `ctx.stash`. Do not spawn it with
 * `allowConcurrentAsync` (it does not await in handlers, so this only matters for
 * custom code run from side effects).
 */
import { ConfigError, StashOverflowError } from "../../base/errors.js";
import { type Schema, validateSync } from "../../base/schema.js";
import {
  FencedWriteError,
  type Journal,
  JournalConflictError,
  type JournalEvent,
  type WriteFence,
} from "../../ports/journal.js";
import type { SnapshotStore } from "../../ports/snapshot-store.js";
import type { ActorContext } from "../actor-context.js";
import { PoisonPill } from "../actor-ref.js";
import { type Behavior, Behaviors } from "../behavior.js";
import { type BackoffOptions, SupervisorStrategy } from "../supervision.js";
import type { Effect } from "./effect.js";
import {
  EventSourcedPersistError,
  EventSourcedRecoveryError,
  EventValidationError,
} from "./errors.js";

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

/** Self-messages of the behavior; never visible to the command handler. */
class EsSignal {
  constructor(
    readonly incarnation: object,
    readonly body:
      | { readonly k: "recovered"; readonly state: unknown; readonly seqNr: number }
      | { readonly k: "recovery-failed"; readonly error: unknown }
      | { readonly k: "persisted" }
      | { readonly k: "persist-failed"; readonly error: unknown }
      | { readonly k: "snapshot-failed"; readonly seqNr: number; readonly error: unknown }
      | { readonly k: "snapshot-saved" },
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
      Behaviors.setup<C | EsSignal>((ctx) => incarnation(o, ctx)),
      strategy,
    ) as Behavior<C>;
  },
} as const;

/** One incarnation: state in this closure, recreated on every restart. */
function incarnation<C, E, S>(
  o: EventSourcedOptions<C, E, S>,
  ctx: ActorContext<C | EsSignal>,
): Behavior<C | EsSignal> {
  const pid = o.persistenceId;
  const userCtx = ctx as unknown as ActorContext<C>;
  const token = {};
  const now = o.timestampMs ?? (() => Math.floor(ctx.now()));
  const snapshotting = o.snapshots !== undefined && o.snapshotCodec !== undefined;
  const stash = ctx.stash;
  const recoveryStashMax = Math.min(o.recoveryStashMax ?? stash.capacity, stash.capacity);

  let state = o.emptyState;
  let seqNr = 0;
  let recovering = true;
  let inFlight: InFlight<E, S> | null = null;
  /** Commands set aside by Effect.stash(). */
  let userStash: C[] = [];
  /** A PoisonPill came while the stash was full: stop at the next idle point. */
  let stopWhenIdle = false;

  const send = (body: EsSignal["body"]) => new EsSignal(token, body);

  ctx.pipeToSelf(recover(o), (r) =>
    r.ok
      ? send({ k: "recovered", state: r.value.state, seqNr: r.value.seqNr })
      : send({ k: "recovery-failed", error: r.error }),
  );

  /** Puts user-stashed commands in front of the mailbox (ctx.stash must be empty). */
  function unstashUser(): void {
    if (userStash.length === 0) return;
    const items = userStash;
    userStash = [];
    for (const m of items) stash.stash(m);
    stash.unstashAll();
  }

  /** Before a restart: keep every buffered command (user-stashed first) in the mailbox. */
  function flushForRestart(): void {
    stash.unstashAll();
    unstashUser();
  }

  function runSideEffects(effect: Effect<E, S>): Behavior<C | EsSignal> {
    let stop = false;
    for (const se of effect.sideEffects) {
      switch (se.k) {
        case "reply":
          se.ref.tell(se.make(state));
          break;
        case "run":
          se.fn(state);
          break;
        case "unstashAll":
          unstashUser();
          break;
        case "stop":
          stop = true;
          break;
      }
    }
    return stop ? Behaviors.stopped : Behaviors.same;
  }

  function handleCommand(command: C): Behavior<C | EsSignal> {
    const effect = o.commandHandler(state, command, userCtx);
    if (effect.kind === "unhandled") return Behaviors.unhandled;
    if (effect.kind === "stash") {
      if (userStash.length >= stash.capacity)
        throw new StashOverflowError(ctx.path.toString(), stash.capacity);
      userStash.push(command);
      return Behaviors.same;
    }
    if (effect.events.length === 0) return runSideEffects(effect);
    const firstSeqNr = seqNr + 1;
    const ts = now();
    const events: JournalEvent[] = effect.events.map((e) => {
      const { serializerId, bytes } = o.eventCodec.encode(e);
      const tags = o.tagger?.(e);
      return tags === undefined
        ? { serializerId, bytes, timestampMs: ts }
        : { serializerId, bytes, tags, timestampMs: ts };
    });
    inFlight = { effect, firstSeqNr };
    ctx.pipeToSelf(o.journal.append(pid, firstSeqNr, events, o.fence), (r) =>
      r.ok ? send({ k: "persisted" }) : send({ k: "persist-failed", error: r.error }),
    );
    return Behaviors.same;
  }

  function onPersisted(): Behavior<C | EsSignal> {
    const { effect, firstSeqNr } = inFlight as InFlight<E, S>;
    inFlight = null;
    const before = seqNr;
    for (const e of effect.events) state = o.eventHandler(state, e);
    seqNr = firstSeqNr + effect.events.length - 1;
    const every = o.snapshotAfter;
    if (
      snapshotting &&
      every !== undefined &&
      Math.floor(seqNr / every) > Math.floor(before / every)
    )
      saveSnapshot();
    stash.unstashAll();
    const next = runSideEffects(effect);
    return stopWhenIdle ? Behaviors.stopped : next;
  }

  /** PoisonPill: stop now when idle, else wait in the stash (in order) like a command. */
  function onPoisonPill(): Behavior<C | EsSignal> {
    if (!recovering && inFlight === null) return Behaviors.stopped;
    if (stash.isFull) stopWhenIdle = true;
    else stash.stash(PoisonPill as unknown as C);
    return Behaviors.same;
  }

  function saveSnapshot(): void {
    const at = seqNr;
    const payload = (o.snapshotCodec as SnapshotCodec<S>).encode(state);
    ctx.pipeToSelf((o.snapshots as SnapshotStore).save(pid, at, now(), payload), (r) =>
      r.ok
        ? send({ k: "snapshot-saved" })
        : send({ k: "snapshot-failed", seqNr: at, error: r.error }),
    );
  }

  function onSignal(s: EsSignal): Behavior<C | EsSignal> {
    const b = s.body;
    switch (b.k) {
      case "recovered":
        state = b.state as S;
        seqNr = b.seqNr;
        recovering = false;
        o.onRecoveryCompleted?.(state, userCtx);
        stash.unstashAll();
        return stopWhenIdle ? Behaviors.stopped : Behaviors.same;
      case "recovery-failed":
        throw new EventSourcedRecoveryError(pid, b.error);
      case "persisted":
        return onPersisted();
      case "persist-failed": {
        const first = (inFlight as InFlight<E, S>).firstSeqNr;
        inFlight = null;
        if (b.error instanceof JournalConflictError || b.error instanceof FencedWriteError) {
          // Another incarnation wrote, or another holder has the shard: stop (failed, with
          // the typed error), never restart.
          const error = b.error;
          ctx.log.error(
            error instanceof FencedWriteError
              ? "fenced write: another node holds this entity's shard, stopping"
              : "journal conflict: another incarnation wrote, stopping",
            { persistenceId: pid, seqNr: first },
          );
          return Behaviors.supervise(
            Behaviors.setup<C | EsSignal>(() => {
              throw error;
            }),
            SupervisorStrategy.stop(),
          );
        }
        throw new EventSourcedPersistError(pid, first, b.error);
      }
      case "snapshot-failed":
        ctx.log.warn("snapshot save failed", {
          persistenceId: pid,
          seqNr: b.seqNr,
          error: b.error,
        });
        return Behaviors.same;
      case "snapshot-saved":
        return Behaviors.same;
    }
  }

  /** On stop: every buffered or stashed command becomes a dead letter. */
  function dropAll(): void {
    stash.clear();
    const items = userStash;
    userStash = [];
    for (const m of items) stash.stash(m);
    stash.clear();
  }

  const onMessage = (_ctx: unknown, msg: C | EsSignal): Behavior<C | EsSignal> => {
    if (msg instanceof EsSignal) return msg.incarnation === token ? onSignal(msg) : Behaviors.same;
    if (recovering) {
      if (stash.size >= recoveryStashMax) {
        stash.clear();
        throw new StashOverflowError(ctx.path.toString(), recoveryStashMax);
      }
      stash.stash(msg);
      return Behaviors.same;
    }
    if (inFlight !== null) {
      if (stash.isFull) {
        stash.clear();
        throw new StashOverflowError(ctx.path.toString(), stash.capacity);
      }
      stash.stash(msg);
      return Behaviors.same;
    }
    return handleCommand(msg);
  };
  const receive = Behaviors.receive<C | EsSignal>(onMessage, (_ctx, signal) => {
    if (signal.type === "PostStop") {
      dropAll();
      o.onPostStop?.(state);
    } else if (signal.type === "PreRestart") flushForRestart();
    else return Behaviors.unhandled;
    return Behaviors.same;
  });
  return { ...receive, onPoisonPill };
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
