/**
 * ActorContext: what a behavior can do while handling a message — its own ref, spawning
 * and stopping children, watching, timers, stash, receive timeout. Only valid inside the
 * actor's own handlers (not from other actors or from after an await in concurrent mode).
 */
import type { Disposable } from "../base/disposable.js";
import type { Logger } from "../ports/logger.js";
import type { ActorPath } from "./actor-path.js";
import type { ActorRef } from "./actor-ref.js";
import type { ActorSystem } from "./actor-system.js";
import type { Behavior } from "./behavior.js";
import type { Props } from "./props.js";

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

export interface ActorContext<M> {
  readonly self: ActorRef<M>;
  readonly path: ActorPath;
  readonly system: ActorSystem;
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
