/**
 * Scheduler port: the only way shardkit code outside runtime/node defers work.
 * `schedule` runs a callback after a delay; `defer` runs one on a later macrotask turn
 * (after pending IO in the real runtime), which is how the actor dispatcher yields.
 */
import type { Disposable } from "../base/disposable.js";

export interface Scheduler {
  /**
   * Runs `fn` once, `delayMs` milliseconds from now (0 = as soon as possible, after
   * already-due work). Disposing the result cancels it; disposing after it ran is a no-op.
   */
  schedule(delayMs: number, fn: () => void): Disposable;
  /** Runs `fn` on a later macrotask turn (after pending IO in the real runtime). */
  defer(fn: () => void): void;
}
