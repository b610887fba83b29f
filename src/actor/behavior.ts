/**
 * Behaviors: what an actor does with its next message. Two styles share one model:
 *
 * - functional: `Behaviors.receive((ctx, msg) => next)`; returning a new behavior
 *   switches state ("become"), returning nothing keeps the current one;
 * - class: extend `AbstractBehavior<M>` and implement `onMessage(msg)`; fields hold state.
 *
 * A handler may return a Promise: the actor then processes nothing else until it
 * settles (the single-thread illusion over async IO), unless spawned with
 * `allowConcurrentAsync`. Behaviors are plain data or objects; the actor cell interprets
 * them, so behaviors can be shared by many actors without per-actor allocation.
 *
 * The context an actor handles messages in (`ActorContext`, with its timers and stash)
 * and the system it sees (`ActorSystemView`) are declared here too: their types and the
 * behaviors' refer to each other, and keeping them in one module keeps the actor model
 * free of import cycles (docs/architecture.md, "Dependency rules"). The actor cell and the
 * system core implement them.
 */
import type { Disposable } from "../base/disposable.js";
import type { Logger } from "../ports/logger.js";
import type { Runtime } from "../ports/runtime.js";
import type { ActorPath } from "./actor-path.js";
import type { ActorRef } from "./actor-ref.js";
import type { DeadLetterReason, EventStream } from "./event-stream.js";
import type { Props } from "./props.js";
import type { ActorSettings } from "./settings.js";
import type { Signal } from "./signals.js";
import type { SupervisorStrategy } from "./supervision.js";

/** What a handler may return: a next behavior, nothing (= same), or a Promise of either. */
export type BehaviorResult<M> = Behavior<M> | undefined | void;
export type HandlerResult<M> = BehaviorResult<M> | PromiseLike<BehaviorResult<M>>;

export type MessageHandler<M> = (ctx: ActorContext<M>, message: M) => HandlerResult<M>;
export type SignalHandler<M> = (ctx: ActorContext<M>, signal: Signal) => HandlerResult<M>;

export interface ReceiveBehavior<M> {
  readonly kind: "receive";
  readonly onMessage: MessageHandler<M>;
  readonly onSignal: SignalHandler<M> | undefined;
  /**
   * Called when a PoisonPill is taken from the mailbox, instead of stopping at once.
   * Return `Behaviors.stopped` to stop now, or keep running and stop later (e.g. once a
   * write in flight ended: the event-sourced behavior stashes the pill meanwhile; a pill
   * put back in the mailbox by `unstashAll` comes here again). Absent: stop at once.
   */
  readonly onPoisonPill?: (ctx: ActorContext<M>) => BehaviorResult<M>;
}
export interface SetupBehavior<M> {
  readonly kind: "setup";
  readonly factory: (ctx: ActorContext<M>) => Behavior<M>;
}
export interface SuperviseBehavior<M> {
  readonly kind: "supervise";
  readonly inner: Behavior<M>;
  readonly strategy: SupervisorStrategy;
}
export interface SameBehavior {
  readonly kind: "same";
}
export interface StoppedBehavior {
  readonly kind: "stopped";
}
export interface UnhandledBehavior {
  readonly kind: "unhandled";
}
export interface EmptyBehavior {
  readonly kind: "empty";
}
export interface IgnoreBehavior {
  readonly kind: "ignore";
}

/**
 * Class style. State lives in fields; `onMessage` returns nothing to stay, or another
 * behavior (e.g. `Behaviors.stopped`) to switch.
 */
export abstract class AbstractBehavior<M> {
  get kind(): "class" {
    return "class";
  }
  constructor(protected readonly context: ActorContext<M>) {}
  abstract onMessage(message: M): HandlerResult<M>;
  /** Override to react to lifecycle signals (PostStop, Terminated, ...). */
  onSignal(_signal: Signal): HandlerResult<M> {
    return Behaviors.unhandled;
  }
}

export type Behavior<M> =
  | ReceiveBehavior<M>
  | SetupBehavior<M>
  | SuperviseBehavior<M>
  | AbstractBehavior<M>
  | SameBehavior
  | StoppedBehavior
  | UnhandledBehavior
  | EmptyBehavior
  | IgnoreBehavior;

const same: SameBehavior = Object.freeze({ kind: "same" });
const stopped: StoppedBehavior = Object.freeze({ kind: "stopped" });
const unhandled: UnhandledBehavior = Object.freeze({ kind: "unhandled" });
const empty: EmptyBehavior = Object.freeze({ kind: "empty" });
const ignore: IgnoreBehavior = Object.freeze({ kind: "ignore" });

export const Behaviors = {
  /** Handle messages with access to the context; optional signal handler. */
  receive<M>(onMessage: MessageHandler<M>, onSignal?: SignalHandler<M>): ReceiveBehavior<M> {
    return { kind: "receive", onMessage, onSignal };
  },
  /** Handle messages only. */
  receiveMessage<M>(
    onMessage: (message: M) => HandlerResult<M>,
    onSignal?: SignalHandler<M>,
  ): ReceiveBehavior<M> {
    return { kind: "receive", onMessage: (_ctx, m) => onMessage(m), onSignal };
  },
  /** Run `factory` when the actor starts (and on every restart) to build its behavior. */
  setup<M>(factory: (ctx: ActorContext<M>) => Behavior<M>): SetupBehavior<M> {
    return { kind: "setup", factory };
  },
  /** Attach a supervisor strategy to this actor (see SupervisorStrategy). */
  supervise<M>(inner: Behavior<M>, strategy: SupervisorStrategy): SuperviseBehavior<M> {
    return { kind: "supervise", inner, strategy };
  },
  /** Keep the current behavior. */
  same,
  /** Stop this actor after the current message. */
  stopped,
  /** The message was not handled: published as UnhandledMessage; behavior unchanged. */
  unhandled,
  /** Treat every message as unhandled. */
  empty,
  /** Drop every message silently. */
  ignore,
} as const;

export interface TimerScheduler<M> {
  /** Sends `message` to self once after `delayMs`; replaces a timer with the same key. */
  startSingleTimer(key: unknown, message: M, delayMs: number): void;
  /** Sends `message` every `delayMs` (measured from the previous send). */
  startTimerWithFixedDelay(
    key: unknown,
    message: M,
    delayMs: number,
    initialDelayMs?: number,
  ): void;
  /** Sends `message` at a fixed rate: the n-th send is due at start + initial + n·interval. */
  startTimerAtFixedRate(
    key: unknown,
    message: M,
    intervalMs: number,
    initialDelayMs?: number,
  ): void;
  /** Cancels the timer; a message from it already in the mailbox is not delivered. */
  cancel(key: unknown): void;
  cancelAll(): void;
  isTimerActive(key: unknown): boolean;
}

export interface StashBuffer<M> {
  /** Keeps `message` for later. Throws StashOverflowError when full (a handler failure). */
  stash(message: M): void;
  /** Puts every stashed message back at the front of the mailbox, in stash order. */
  unstashAll(): void;
  /** Drops every stashed message to dead letters. */
  clear(): void;
  readonly size: number;
  readonly capacity: number;
  readonly isEmpty: boolean;
  readonly isFull: boolean;
}

/**
 * What a behavior can do while handling a message — its own ref, spawning and stopping
 * children, watching, timers, stash, receive timeout. Only valid inside the actor's own
 * handlers (not from other actors or from after an await in concurrent mode).
 */
export interface ActorContext<M> {
  readonly self: ActorRef<M>;
  readonly path: ActorPath;
  /** The system this actor runs in (the `ActorSystem` that spawned it). */
  readonly system: ActorSystemView;
  /** Logger tagged with this actor's path. */
  readonly log: Logger;
  readonly timers: TimerScheduler<M>;
  readonly stash: StashBuffer<M>;

  /** Spawns a child. Names are unique among live siblings; omitted = generated. */
  spawn<C>(behavior: Behavior<C>, name?: string, props?: Props): ActorRef<C>;
  /** Stops a child of this actor (asynchronously; its children stop first). */
  stop(child: ActorRef<never>): void;
  child(name: string): ActorRef<unknown> | undefined;
  readonly children: readonly ActorRef<unknown>[];

  /** Delivers a Terminated signal when `ref` stops. */
  watch(ref: ActorRef<never>): void;
  /** Delivers `message` (instead of a signal) when `ref` stops. */
  watchWith(ref: ActorRef<never>, message: M): void;
  unwatch(ref: ActorRef<never>): void;

  /** Sends `message` to self after `timeoutMs` without any incoming message. */
  setReceiveTimeout(timeoutMs: number, message: M): void;
  cancelReceiveTimeout(): void;

  /** Sends `message` to `target` after `delayMs`. Dispose to cancel. */
  scheduleOnce<T>(delayMs: number, target: ActorRef<T>, message: T): Disposable;
  /** When `promise` settles, sends `map(result)` to self (safe way to use async results). */
  pipeToSelf<T>(
    promise: PromiseLike<T>,
    map: (result: { ok: true; value: T } | { ok: false; error: unknown }) => M,
  ): void;
  /** Monotonic time of this node's clock, in ms. */
  now(): number;
}

/** Counters of one actor system. */
export interface ActorSystemStats {
  readonly deadLetters: number;
  readonly unhandled: number;
  readonly failures: number;
  readonly pendingAsks: number;
}

/**
 * The actor system as an actor sees it through `ctx.system`: everything `ActorSystem`
 * offers except creating one. `ActorSystem` implements it; declaring it here, beside the
 * behaviors it spawns, keeps the actor model's types free of the implementation.
 */
export interface ActorSystemView {
  readonly name: string;
  readonly settings: Readonly<ActorSettings>;
  readonly runtime: Runtime;
  readonly log: Logger;
  readonly eventStream: EventStream;
  /** Messages told to this ref are counted and published as DeadLetter events. */
  readonly deadLetters: ActorRef<unknown>;
  readonly stats: ActorSystemStats;
  readonly isTerminated: boolean;
  /** Resolves when terminate() has finished. */
  readonly whenTerminated: Promise<void>;
  /** @internal Dead-letter and unhandled accounting for drivers built on actors. */
  readonly core: ActorSystemAccounting;
  /** Spawns a top-level actor under /user. */
  spawn<M>(behavior: Behavior<M>, name?: string, props?: Props): ActorRef<M>;
  /** Stops a top-level actor (children first). For deeper actors, use ctx.stop. */
  stop(ref: ActorRef<never>): void;
  /** Stops every actor (children before parents), rejects pending asks, and resolves. */
  terminate(): Promise<void>;
}

/**
 * @internal What drivers reach through `ctx.system.core`: counted dead letters and
 * unhandled messages.
 */
export interface ActorSystemAccounting {
  deadLetter(
    message: unknown,
    recipient: ActorRef<never> | string,
    reason: DeadLetterReason,
    cause?: unknown,
  ): void;
  unhandled(message: unknown, recipient: ActorRef<never>): void;
  /**
   * Told the duration of each event-sourced recovery (snapshot and replay, ms), how it
   * ended and the path of the recovering actor (the metrics find a sharded entity's type
   * in it); set by the node's metrics (src/observability/node-metrics.ts), else undefined
   * (then recoveries read no clock for it).
   */
  recoveryObserver: RecoveryObserver | undefined;
}

/** See ActorSystemAccounting.recoveryObserver. */
export type RecoveryObserver = (
  durationMs: number,
  outcome: "recovered" | "failed",
  path: ActorPath,
) => void;
