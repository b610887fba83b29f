/**
 * ActorRef: the only handle users have on an actor. Location transparent: a local cell,
 * a temporary ask reply target, dead letters and (later) remote actors all implement it.
 * `in M` makes refs contravariant, so an ActorRef<unknown> can stand where an
 * ActorRef<Reply> is expected.
 */
import type { ActorPath } from "./actor-path.js";

/** Stops the receiving actor once every message sent before it has been processed. */
export const PoisonPill: unique symbol = Symbol.for("shardkit.PoisonPill");
export type PoisonPill = typeof PoisonPill;

export interface ActorRef<in M> {
  readonly path: ActorPath;
  /**
   * Sends a message without waiting. Never throws for a stopped target: the message
   * goes to dead letters. Messages from one sender to one receiver arrive in order.
   */
  tell(message: M | PoisonPill): void;
}
