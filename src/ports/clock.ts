/**
 * Clock port: monotonic milliseconds. Never wall-clock time; differences between two
 * readings are meaningful, absolute values are not. runtime/node reads
 * performance.now(); runtime/sim returns virtual time (optionally drifted per node).
 */
export interface Clock {
  /** Monotonic time in milliseconds (may be fractional). */
  now(): number;
}
