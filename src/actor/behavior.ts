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
 */
import type { ActorContext } from "./actor-context.js";
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
