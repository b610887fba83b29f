/**
 * Internal contracts between the actor cell, the system core and the special refs
 * (ask replies, dead letters, later remote refs). Not exported from the package.
 */
import type { ActorPath } from "./actor-path.js";
import type { ActorRef } from "./actor-ref.js";
import type { SystemCore } from "./system-core.js";

/** System messages: lifecycle traffic that bypasses the user mailbox and its bound. */
export type SystemMessage =
  | { readonly k: "create" }
  | { readonly k: "stop" }
  | { readonly k: "restart-now" }
  | { readonly k: "watch"; readonly watcher: InternalRef }
  | { readonly k: "unwatch"; readonly watcher: InternalRef }
  | {
      readonly k: "terminated";
      readonly ref: InternalRef;
      readonly failed: boolean;
      readonly error: unknown;
    }
  | { readonly k: "child-terminated"; readonly child: InternalRef };

/** Every ref shardkit creates implements this. */
export interface InternalRef<M = unknown> extends ActorRef<M> {
  readonly core: SystemCore;
  readonly path: ActorPath;
  readonly isTerminated: boolean;
  sendSystem(message: SystemMessage): void;
}

export function isInternalRef(ref: unknown): ref is InternalRef {
  return typeof ref === "object" && ref !== null && "sendSystem" in ref && "core" in ref;
}

/** Identity of an actor incarnation across ref objects: path plus uid. */
export function refKey(ref: InternalRef): string {
  const p = ref.path;
  return `${p.toString()}#${p.uid}`;
}

/** Base class of messages the cell injects into its own user mailbox. */
export abstract class InternalMessage {}
