/**
 * Effects: what an event-sourced command handler decides. A command handler never
 * changes state itself; it returns an Effect that says which events to persist (if
 * any) and what to do once they are durable (reply, run a side effect, unstash, stop).
 *
 * Effects are immutable values: every `then*` returns a new Effect with one more side
 * effect. Side effects run in the order they were added, with the state *after* the
 * persisted events were applied, and only after the journal append resolved.
 */
import type { ActorRef } from "../actor-ref.js";
import { InvalidEffectError } from "./errors.js";

/** One step to run after the events are durable (or at once when there are none). */
export type SideEffect<S> =
  | { readonly k: "reply"; readonly ref: ActorRef<unknown>; readonly make: (state: S) => unknown }
  | { readonly k: "run"; readonly fn: (state: S) => void }
  | { readonly k: "unstashAll" }
  | { readonly k: "stop" };

type EffectKind = "persist" | "stash" | "unhandled";

/**
 * The outcome of one command. `E` is the event type, `S` the state type the side
 * effects see. Build with the static helpers: `Effect.persist`, `Effect.none`,
 * `Effect.reply`, `Effect.stash`, `Effect.unstashAll`, `Effect.stop`, `Effect.unhandled`.
 */
export class Effect<E, S> {
  private constructor(
    /** "persist" also covers "no events" (`Effect.none()`): events may be empty. */
    readonly kind: EffectKind,
    readonly events: readonly E[],
    readonly sideEffects: readonly SideEffect<S>[],
  ) {}

  /** Persist one event or several (atomically, as one journal append), then run the side effects. */
  static persist<E, S = unknown>(events: E | readonly E[]): Effect<E, S> {
    const list = Array.isArray(events) ? [...(events as readonly E[])] : [events as E];
    return new Effect<E, S>("persist", list, []);
  }

  /** Persist nothing; side effects added with `then*` run at once. */
  static none<E = never, S = unknown>(): Effect<E, S> {
    return new Effect<E, S>("persist", [], []);
  }

  /** Reply without persisting. */
  static reply<R, E = never, S = unknown>(ref: ActorRef<R>, message: R): Effect<E, S> {
    return Effect.none<E, S>().thenReply(ref, () => message);
  }

  /**
   * Set the command aside (bounded by the actor's stash capacity; overflow fails the
   * entity with StashOverflowError) until a later effect does `thenUnstashAll()`.
   */
  static stash<E = never, S = unknown>(): Effect<E, S> {
    return new Effect<E, S>("stash", [], []);
  }

  /** Put every stashed command back in front of the mailbox, in stash order. */
  static unstashAll<E = never, S = unknown>(): Effect<E, S> {
    return Effect.none<E, S>().thenUnstashAll();
  }

  /** Stop the entity (persisting nothing). Commands buffered or stashed become dead letters. */
  static stop<E = never, S = unknown>(): Effect<E, S> {
    return Effect.none<E, S>().thenStop();
  }

  /** The command was not handled: published as UnhandledMessage, nothing else happens. */
  static unhandled<E = never, S = unknown>(): Effect<E, S> {
    return new Effect<E, S>("unhandled", [], []);
  }

  /**
   * The same helpers with `E` and `S` fixed, so side effects see a typed state without
   * annotating every call: `const Eff = Effect.of<Event, State>()`.
   */
  static of<E, S>(): EffectFactory<E, S> {
    return EFFECTS as unknown as EffectFactory<E, S>;
  }

  /** After persisting, tell `ref` the message `make(newState)`. */
  thenReply<R>(ref: ActorRef<R>, make: (state: S) => R): Effect<E, S> {
    return this.add({ k: "reply", ref: ref as ActorRef<unknown>, make });
  }

  /** After persisting, run `fn(newState)` (a failure there fails the entity). */
  thenRun(fn: (state: S) => void): Effect<E, S> {
    return this.add({ k: "run", fn });
  }

  /** After persisting, unstash every command stashed with `Effect.stash()`. */
  thenUnstashAll(): Effect<E, S> {
    return this.add({ k: "unstashAll" });
  }

  /** After persisting (and the other side effects), stop the entity. */
  thenStop(): Effect<E, S> {
    return this.add({ k: "stop" });
  }

  private add(se: SideEffect<S>): Effect<E, S> {
    if (this.kind !== "persist") throw new InvalidEffectError(this.kind);
    return new Effect<E, S>(this.kind, this.events, [...this.sideEffects, se]);
  }
}

/** `Effect`'s static helpers with the event and state types fixed (see `Effect.of`). */
export interface EffectFactory<E, S> {
  persist(events: E | readonly E[]): Effect<E, S>;
  none(): Effect<E, S>;
  reply<R>(ref: ActorRef<R>, message: R): Effect<E, S>;
  stash(): Effect<E, S>;
  unstashAll(): Effect<E, S>;
  stop(): Effect<E, S>;
  unhandled(): Effect<E, S>;
}

const EFFECTS: EffectFactory<unknown, unknown> = {
  persist: (events) => Effect.persist(events),
  none: () => Effect.none(),
  reply: (ref, message) => Effect.reply(ref, message),
  stash: () => Effect.stash(),
  unstashAll: () => Effect.unstashAll(),
  stop: () => Effect.stop(),
  unhandled: () => Effect.unhandled(),
};
