/**
 * Coordinated shutdown driver and its cluster wiring (see docs/shutdown.md).
 */
export {
  addActorSystemTerminateTask,
  ClusterShutdownTask,
  installClusterShutdown,
  shutdownReasonOfSelfExit,
} from "./cluster-shutdown.js";
export {
  CoordinatedShutdown,
  type CoordinatedShutdownOptions,
  type ShutdownTask,
  type ShutdownTaskContext,
} from "./coordinated-shutdown.js";
export {
  type SelfExitEvent,
  type SelfExitState,
  SelfExitWatch,
} from "./self-exit-watch.js";
