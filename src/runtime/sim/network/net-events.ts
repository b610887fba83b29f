/**
 * What the network's parts need from the world: its clock and its event queue. Every
 * callback the network makes into user code runs inside one of these events, never
 * synchronously inside an API call (send, connect, close, ...).
 */
import type { Disposable } from "../../../base/disposable.js";

/** World time and event scheduling. */
export interface NetEvents {
  /** World time, ms. */
  readonly now: number;
  /** Queues `fn` at world time `timeMs` (>= now). */
  scheduleAt(timeMs: number, fn: () => void): Disposable;
}
