/**
 * The real Clock: monotonic milliseconds from `performance.now()`.
 *
 * Invariant: readings never decrease (performance.now is monotonic, unlike Date.now,
 * which follows wall-clock adjustments). Only differences are meaningful.
 */
import type { Clock } from "../../ports/clock.js";

/** Clock backed by `performance.now()` (fractional ms since process start). */
export class NodeClock implements Clock {
  now(): number {
    return performance.now();
  }
}
