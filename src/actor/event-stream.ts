/**
 * EventStream: typed publish/subscribe inside one actor system. Subscribers choose an
 * event `type`; the handler receives exactly that member of the union. Subscribers are
 * functions or actor refs; a throwing subscriber is logged and does not affect others.
 */
import type { Disposable } from "../base/disposable.js";
import type { Logger } from "../ports/logger.js";
import type { ActorRef } from "./actor-ref.js";

/** A message to an actor that had stopped, overflowed or did not exist. */
export interface DeadLetter {
  readonly type: "DeadLetter";
  readonly message: unknown;
  readonly recipient: string;
  readonly reason: DeadLetterReason;
  /** The typed error, when the message failed (e.g. it could not be serialized). */
  readonly cause?: unknown;
}
export type DeadLetterReason =
  | "stopped"
  | "mailbox-overflow"
  | "late-reply"
  | "stash-cleared"
  | "send-failed"
  | "queue-overflow"
  | "buffer-overflow"
  | "unknown-manifest"
  | "invalid-message";

/** A behavior returned Behaviors.unhandled (or was empty). */
export interface UnhandledMessage {
  readonly type: "UnhandledMessage";
  readonly message: unknown;
  readonly recipient: string;
}

/** An actor's handler threw; `directive` is what its supervisor did. */
export interface ActorFailed {
  readonly type: "ActorFailed";
  readonly path: string;
  readonly error: unknown;
  readonly directive: "stop" | "resume" | "restart";
}

export type SystemEvent = DeadLetter | UnhandledMessage | ActorFailed;

/** Any event: a `type` discriminant plus data. */
export interface AnyEvent {
  readonly type: string;
}

/** The event type for a `type` string: a SystemEvent member, or a user event. */
export type EventOf<K extends string> = K extends SystemEvent["type"]
  ? Extract<SystemEvent, { type: K }>
  : AnyEvent & { readonly type: K };

type Subscriber = ((event: AnyEvent) => void) | ActorRef<AnyEvent>;

export class EventStream {
  private readonly subs = new Map<string, Subscriber[]>();

  constructor(private readonly log: Logger) {}

  /** Subscribes to events of `type`. Dispose the result to unsubscribe. */
  subscribe<K extends string>(
    type: K,
    handler: ((event: EventOf<K>) => void) | ActorRef<EventOf<K>>,
  ): Disposable {
    const sub = handler as Subscriber;
    const list = this.subs.get(type);
    if (list) list.push(sub);
    else this.subs.set(type, [sub]);
    return {
      dispose: () => {
        const l = this.subs.get(type);
        if (!l) return;
        const i = l.indexOf(sub);
        if (i >= 0) l.splice(i, 1);
        if (l.length === 0) this.subs.delete(type);
      },
    };
  }

  /** True when someone listens for `type` (lets publishers skip building events). */
  hasSubscribers(type: string): boolean {
    return this.subs.has(type);
  }

  publish<E extends AnyEvent>(event: E): void {
    const list = this.subs.get(event.type);
    if (!list) return;
    for (const sub of [...list]) {
      try {
        if (typeof sub === "function") sub(event);
        else sub.tell(event);
      } catch (error) {
        this.log.error("event stream subscriber threw", { eventType: event.type, error });
      }
    }
  }
}
