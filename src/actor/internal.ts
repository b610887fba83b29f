/**
 * Internal contracts between the actor cell, the system core and the special refs
 * (ask replies, dead letters, remote refs). Not exported from the package.
 *
 * Cells, asks and refs see the system core only as `SystemServices`: the core creates
 * cells and cells call the core, so naming the concrete class on both sides would tie
 * them into an import cycle (docs/architecture.md, "Dependency rules").
 */
import type { Clock } from "../ports/clock.js";
import type { Logger } from "../ports/logger.js";
import type { Random } from "../ports/random.js";
import type { Runtime } from "../ports/runtime.js";
import type { Scheduler } from "../ports/scheduler.js";
import type { ActorPath } from "./actor-path.js";
import type { ActorRef } from "./actor-ref.js";
import type { ActorSystemView } from "./behavior.js";
import type { Dispatcher } from "./dispatcher.js";
import type { DeadLetterReason, EventStream } from "./event-stream.js";
import type { ActorSettings } from "./settings.js";

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
  readonly core: SystemServices;
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

/**
 * A user message delivered inside a scope (a trace span, cluster/sharding/traced-message.ts):
 * the cell hands the behavior `message` from within `run`. Anywhere else a scoped message
 * ends up (dead letters, unhandled) it stands for `message`.
 */
export abstract class ScopedMessage extends InternalMessage {
  abstract readonly message: unknown;
  /** Calls `deliver` (which runs the behavior on `message`) inside the scope. */
  abstract run(deliver: () => void): void;
}

/** `message` without its scope (see ScopedMessage). */
export function unscoped(message: unknown): unknown {
  return message instanceof ScopedMessage ? message.message : message;
}

/** Pending asks of one system, as cells and reply refs use them (implemented in ask.ts). */
export interface AskRegistrar {
  readonly pending: number;
  /** A reply target for one ask, or null when `askPendingMax` asks are pending. */
  create<R>(
    target: InternalRef,
    timeoutMs: number,
    resolve: (r: R) => void,
    reject: (e: unknown) => void,
    signal: AbortSignal | undefined,
  ): PendingAsk<R> | null;
  /** Called once per ask when it resolves, rejects or times out. */
  completed(ref: PendingAsk<unknown>): void;
}

/** The reply target of one pending ask. */
export interface PendingAsk<R> extends InternalRef<R> {
  fail(error: unknown): void;
}

/** What the system core offers cells, asks and refs (implemented by SystemCore). */
export interface SystemServices {
  readonly name: string;
  /** `shardkit://<name>` until remoting binds it to `shardkit://<name>@host:port`. */
  readonly address: string;
  readonly runtime: Runtime;
  readonly settings: Readonly<ActorSettings>;
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  readonly random: Random;
  readonly log: Logger;
  readonly eventStream: EventStream;
  readonly dispatcher: Dispatcher;
  readonly asks: AskRegistrar;
  readonly isTerminating: boolean;
  /** The public facade of this system (set once, right after creation). */
  readonly system: ActorSystemView;
  nextUid(): number;
  nextName(): string;
  /** Throws SystemTerminatedError once the system is terminating. */
  assertRunning(what: string): void;
  deadLetter(
    message: unknown,
    recipient: InternalRef | string,
    reason: DeadLetterReason,
    cause?: unknown,
  ): void;
  unhandled(message: unknown, cell: InternalRef): void;
  actorFailed(cell: InternalRef, error: unknown, directive: "stop" | "resume" | "restart"): void;
  /** A guardian (/user or /system) has stopped. */
  guardianTerminated(cell: InternalRef): void;
}
