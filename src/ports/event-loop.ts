/**
 * EventLoopMonitor port: how long this process's event loop was blocked. Membership uses
 * it for self-aware failure detection (core/failure-detector/self-stall.ts): time during
 * which the observer itself could not run does not count against the members it
 * monitors. runtime/node samples the real loop (perf_hooks.monitorEventLoopDelay);
 * runtime/sim reports the stalls a test injects into a simulated node.
 */
export interface EventLoopMonitor {
  /**
   * The longest event-loop delay (ms) observed since the previous call (or since the
   * monitor started), then starts a new measurement period. 0 when the loop ran on time.
   */
  takeMaxDelayMs(): number;
}
