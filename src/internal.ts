/**
 * `shardkit/internal`: the building blocks the public facade (`shardkit`) is assembled
 * from — the membership and remoting drivers, the sharding stores, the shutdown machine
 * and its cluster wiring, the outbox's state and redelivery planning. For tools, tests
 * and advanced assembly (a node without `ClusterNode`). No compatibility promise: these
 * names change with the implementation. Each name is exported once, and none of them is
 * also exported by `shardkit`; `test/api/api-surface.test.ts` snapshots the list.
 * See docs/architecture.md, "Public API".
 */

// Outbox state and redelivery planning
export {
  applyOutboxEvent,
  emptyOutboxState,
  type OutboxState,
  outboxSnapshotOf,
  outboxStateOf,
} from "./actor/outbox/outbox-state.js";
export {
  admitsSend,
  type PlannedAttempt,
  type PlannerSettings,
  RedeliveryPlanner,
  redeliveryDelayMs,
  type TickPlan,
} from "./actor/outbox/redelivery-planner.js";

// Membership and remoting drivers
export { Cluster, type ClusterOptions } from "./cluster/membership/cluster.js";
export { RemoteActorRef } from "./cluster/remoting/remote-actor-ref.js";
export { Remoting, type RemotingOptions } from "./cluster/remoting/remoting.js";

// Sharding state stores
export {
  type CoordinatorRecoveryData,
  type CoordinatorStore,
  JournalCoordinatorStore,
} from "./cluster/sharding/coordinator-store.js";
export {
  type JournalRememberEntitiesSettings,
  JournalRememberEntitiesStore,
} from "./cluster/sharding/journal-remember-entities-store.js";
export {
  coordinatorPersistenceId,
  rememberPersistenceId,
  SHARDING_PERSISTENCE_ID_PREFIX,
} from "./cluster/sharding/sharding-store-codec.js";

// Coordinated shutdown: the machine and its cluster wiring
export {
  addActorSystemTerminateTask,
  ClusterShutdownTask,
  installClusterShutdown,
  shutdownReasonOfSelfExit,
} from "./cluster/shutdown/cluster-shutdown.js";
export {
  type SelfExitEvent,
  type SelfExitState,
  SelfExitWatch,
} from "./cluster/shutdown/self-exit-watch.js";
export {
  orderPhases,
  type PhaseOrderProblem,
  type PhaseOrderResult,
} from "./core/shutdown/phase-order.js";
export {
  type AddTaskResult,
  type PhaseOutcome,
  type ShutdownInput,
  ShutdownMachine,
  type ShutdownOutput,
  type ShutdownTaskInfo,
  type TaskId,
} from "./core/shutdown/shutdown-machine.js";
export { builtInPhases } from "./core/shutdown/shutdown-phases.js";
export { resolveShutdownSettings } from "./core/shutdown/shutdown-settings.js";

// The management server's building blocks (routes for other modules, the bootstrap)
export { type MemberJson, membersJson } from "./management/cluster-routes.js";
export { lookupContactPoints, resolveDiscoverySettings } from "./management/discovery.js";
export { tokenMatches } from "./management/http-server.js";
export { startManagement } from "./management/index.js";
export {
  HttpError,
  type HttpMethod,
  type RouteHandler,
  type RouteOptions,
  type RouteRequest,
  type RouteResponse,
  Router,
} from "./management/router.js";
export {
  DEFAULT_MANAGEMENT_SETTINGS,
  isLoopbackHost,
  resolveManagementSettings,
} from "./management/settings.js";
