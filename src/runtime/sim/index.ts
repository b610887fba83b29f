/**
 * The deterministic simulator: virtual time, seeded randomness and traced logs behind
 * the same ports the real runtime implements (docs/architecture.md, "The determinism boundary").
 */
export { toDetail } from "./detail.js";
export { EventQueue, type QueuedEvent } from "./event-queue.js";
export { Fnv1a64 } from "./fnv1a64.js";
export {
  DEFAULT_LINK_CONFIG,
  type DirectionOptions,
  type LinkConfig,
  type NodeNames,
  type ResetCause,
  type SimEndpoint,
  type SimListener,
  SimNetwork,
  type SimNetworkOptions,
  type SimTransport,
} from "./network/index.js";
export { SeededRandom } from "./seeded-random.js";
export { nodeSeed, rootSeed } from "./seeds.js";
export { SimClock, type SimClockOptions, type WorldTime } from "./sim-clock.js";
export { SimStepsExceededError } from "./sim-errors.js";
export { SimLogger, type SimLogSink } from "./sim-logger.js";
export { type SimEventHost, SimScheduler } from "./sim-scheduler.js";
export {
  type SimNodeOptions,
  type SimRuntime,
  SimWorld,
  type SimWorldOptions,
  WORLD_NODE,
} from "./sim-world.js";
export { Trace, type TraceEntry } from "./trace.js";
export { SimFailure, withSeed } from "./with-seed.js";
