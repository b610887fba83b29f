/**
 * The bundle of ports a node runs on. runtime/node builds the real one; runtime/sim
 * builds one per simulated node, all sharing one virtual event queue.
 */
import type { Clock } from "./clock.js";
import type { EventLoopMonitor } from "./event-loop.js";
import type { Logger } from "./logger.js";
import type { Random } from "./random.js";
import type { Scheduler } from "./scheduler.js";

export interface Runtime {
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  readonly random: Random;
  readonly logger: Logger;
  /** Event-loop delay of this process (optional: without it, membership measures its
   * own timers' lateness only). */
  readonly eventLoop?: EventLoopMonitor;
}
