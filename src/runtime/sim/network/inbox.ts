/**
 * The callback side of a simulated connection end: data, drain and close notifications
 * on their way to the user's ConnectionHandlers.
 *
 * Invariants:
 * - Notifications reach the handlers in the order they were produced, and nothing is
 *   delivered after the close notification (the port's "exactly once, last").
 * - Nothing is delivered before `install` (the port buffers early data), and installing
 *   delivers what was buffered in a separate event, not inside `setHandlers`.
 * - `deliverNow` is for the network's own events: it calls the handler at once when
 *   nothing is queued ahead. `deliverLater` is for paths reached from API calls
 *   (destroy, close) and always goes through a fresh event, so no user callback ever
 *   runs synchronously inside an API call.
 */
import { assert } from "../../../base/assert.js";
import { Deque } from "../../../base/deque.js";
import type { Disposable } from "../../../base/disposable.js";
import type { CloseReason, ConnectionHandlers } from "../../../ports/transport.js";
import type { NetEvents } from "./net-events.js";

/** One pending notification. */
export type InboxItem =
  | { readonly type: "data"; readonly bytes: Uint8Array }
  | { readonly type: "drain" }
  | { readonly type: "close"; readonly reason: CloseReason };

/** Ordered, event-driven delivery of one connection end's notifications. */
export class Inbox {
  private handlers: ConnectionHandlers | undefined;
  private readonly items = new Deque<InboxItem>();
  private flushEvent: Disposable | undefined;
  private closeAccepted = false;

  constructor(private readonly events: NetEvents) {}

  /** Installs the handlers (once); buffered notifications follow in their own event. */
  install(handlers: ConnectionHandlers): void {
    assert(this.handlers === undefined, "setHandlers must be called exactly once");
    this.handlers = handlers;
    if (this.items.length > 0) this.scheduleFlush();
  }

  /** From a network event: delivers at once unless something is queued ahead. */
  deliverNow(item: InboxItem): void {
    if (!this.accept(item)) return;
    const handlers = this.handlers;
    if (handlers !== undefined && this.items.length === 0 && this.flushEvent === undefined) {
      this.dispatch(handlers, item);
      return;
    }
    this.items.push(item);
    if (handlers !== undefined) this.scheduleFlush();
  }

  /** From an API call: delivers in a later event. */
  deliverLater(item: InboxItem): void {
    if (!this.accept(item)) return;
    this.items.push(item);
    if (this.handlers !== undefined) this.scheduleFlush();
  }

  /** Drops queued data and drain notifications (the user destroyed the connection). */
  dropData(): void {
    const kept = [...this.items].filter((item) => item.type === "close");
    this.items.clear();
    for (const item of kept) this.items.push(item);
  }

  /** Drops everything and never delivers again (the owning process crashed). */
  silence(): void {
    this.closeAccepted = true;
    this.items.clear();
    this.flushEvent?.dispose();
    this.flushEvent = undefined;
  }

  private accept(item: InboxItem): boolean {
    if (this.closeAccepted) return false;
    if (item.type === "close") this.closeAccepted = true;
    return true;
  }

  private scheduleFlush(): void {
    if (this.flushEvent !== undefined) return;
    this.flushEvent = this.events.scheduleAt(this.events.now, () => this.flush());
  }

  private flush(): void {
    this.flushEvent = undefined;
    const handlers = this.handlers;
    if (handlers === undefined) return;
    for (let item = this.items.shift(); item !== undefined; item = this.items.shift()) {
      this.dispatch(handlers, item);
    }
  }

  private dispatch(handlers: ConnectionHandlers, item: InboxItem): void {
    switch (item.type) {
      case "data":
        handlers.onData(item.bytes);
        return;
      case "drain":
        handlers.onDrain();
        return;
      case "close":
        this.items.clear();
        handlers.onClose(item.reason);
        return;
    }
  }
}
