/**
 * Lifecycle signals delivered to a behavior's `onSignal`, separate from its messages so
 * a message union never has to include them.
 */
import type { ActorRef } from "./actor-ref.js";

export type Signal =
  /** The actor is stopping; after this it receives nothing. */
  | { readonly type: "PostStop" }
  /** The actor failed and is about to be restarted by its supervisor strategy. */
  | { readonly type: "PreRestart"; readonly error: unknown }
  /** A watched actor stopped (normally or, for non-children, after a failure). */
  | { readonly type: "Terminated"; readonly ref: ActorRef<never> }
  /** A watched child stopped because it failed. */
  | { readonly type: "ChildFailed"; readonly ref: ActorRef<never>; readonly error: unknown };

export const PostStop: Signal = Object.freeze({ type: "PostStop" });
