/**
 * The real EventLoopMonitor (src/ports/event-loop.ts): perf_hooks.monitorEventLoopDelay
 * samples how late a libuv timer of `resolutionMs` fires; the longest sample since the
 * previous `takeMaxDelayMs` is the longest time the loop was blocked (minus the
 * resolution). The histogram starts on the first call, so a process that never asks pays
 * nothing; its sampling timer does not keep the process alive.
 */
import { type IntervalHistogram, monitorEventLoopDelay } from "node:perf_hooks";
import type { EventLoopMonitor } from "../../ports/event-loop.js";

/** Sampling resolution of the histogram, ms. */
export const EVENT_LOOP_MONITOR_RESOLUTION_MS = 20;

/** Event-loop delay of this process. */
export class NodeEventLoopMonitor implements EventLoopMonitor {
  private histogram: IntervalHistogram | undefined;

  takeMaxDelayMs(): number {
    const h = this.histogram;
    if (h === undefined) {
      this.histogram = monitorEventLoopDelay({ resolution: EVENT_LOOP_MONITOR_RESOLUTION_MS });
      this.histogram.enable();
      return 0;
    }
    // max is in ns and includes the sampling interval itself
    const maxMs = h.count === 0 ? 0 : h.max / 1e6 - EVENT_LOOP_MONITOR_RESOLUTION_MS;
    h.reset();
    return Math.max(0, maxMs);
  }

  /** Stops sampling. */
  dispose(): void {
    this.histogram?.disable();
    this.histogram = undefined;
  }
}
