/**
 * The one shape of the drivers (docs/architecture.md, "One driver shape"): an actor
 * feeds its sans-IO machine inputs with the current time and performs the outputs in
 * order, each through one entry of an interpreter table keyed by the output's `type` (so
 * a new output kind that is not performed is a compile error); the actor's own messages
 * go through a table of handlers keyed by theirs. Used by the sharding drivers
 * (cluster/sharding/), the singleton manager and proxy (cluster/singleton/) and the
 * event-sourced behaviour (actor/event-sourced/). The helpers below cover what every
 * driver does the same way: timers, persist-then-ack and log lines.
 */

import type { LogFields, Logger } from "../ports/logger.js";
import type { TimerScheduler } from "./actor-context.js";
import type { ActorRef } from "./actor-ref.js";

/** A sans-IO machine: `handle(input, nowMs)` returns the outputs to perform, in order. */
export interface Machine<I, O> {
  handle(input: I, nowMs: number): readonly O[];
}

/** One performer per output `type`. */
export type Performers<O extends { readonly type: string }> = {
  readonly [K in O["type"]]: (output: Extract<O, { readonly type: K }>) => void;
};

/**
 * One handler per message `type` (the driver's own messages); `R` is what a handler
 * returns (nothing, or e.g. the actor's next behavior).
 */
export type Handlers<T extends { readonly type: string }, R = void> = {
  readonly [K in T["type"]]: (message: Extract<T, { readonly type: K }>) => R;
};

/** Feeds a machine and performs its outputs through a table. */
export class MachineDriver<I, O extends { readonly type: string }> {
  constructor(
    private readonly machine: Machine<I, O>,
    private readonly now: () => number,
    private readonly performers: Performers<O>,
  ) {}

  /** Feeds `input` at the current time and performs the outputs in order. */
  feed(input: I): void {
    const outs = this.machine.handle(input, this.now());
    for (let i = 0; i < outs.length; i++) this.perform(outs[i] as O);
  }

  perform(output: O): void {
    (this.performers[output.type as O["type"]] as (o: O) => void)(output);
  }
}

/** Calls the handler of `message.type` in `handlers` and returns its result. */
export function dispatch<T extends { readonly type: string }, R = void>(
  handlers: Handlers<T, R>,
  message: T,
): R {
  return (handlers[message.type as T["type"]] as (m: T) => R)(message);
}

/** The `start-timer` / `cancel-timer` outputs: one-shot actor timers, `message(key)` on expiry. */
export function timerPerformers<M>(
  timers: TimerScheduler<M>,
  message: (key: string) => M,
): {
  readonly "start-timer": (o: { readonly key: string; readonly delayMs: number }) => void;
  readonly "cancel-timer": (o: { readonly key: string }) => void;
} {
  return {
    "start-timer": (o) => timers.startSingleTimer(o.key, message(o.key), o.delayMs),
    "cancel-timer": (o) => timers.cancel(o.key),
  };
}

/**
 * Persist-then-ack: runs `write` and tells `self` `ok()` once it succeeded or
 * `failed(error)` once it failed, so the machine learns the outcome as an input.
 */
export function persistThenAck<M>(
  self: ActorRef<M>,
  write: () => Promise<unknown>,
  ok: () => M,
  failed: (error: unknown) => M,
): void {
  write().then(
    () => self.tell(ok()),
    (error: unknown) => self.tell(failed(error)),
  );
}

/** Writes a machine's `log` output with the driver's fields. */
export function logOutput(
  log: Logger,
  level: "debug" | "info" | "warn" | "error",
  text: string,
  fields: LogFields,
): void {
  log[level](text, fields);
}
