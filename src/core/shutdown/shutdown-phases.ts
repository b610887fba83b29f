/**
 * The built-in phases of a coordinated shutdown, as data (the same list and defaults as
 * Akka's `akka.coordinated-shutdown.phases`). Each phase names the phases it depends on;
 * the run order is a topological sort of that graph (see phase-order.ts), so an
 * application can add its own phases anywhere by naming their dependencies, and can make
 * a built-in phase wait for one of its own by overriding that phase's `dependsOn`.
 *
 * Why phases and not one list of callbacks: components that know nothing of each other
 * (HTTP endpoints, sharding regions, the membership driver, the actor system) must stop
 * in a fixed order — stop taking requests, hand off shards, leave the cluster, stop
 * actors — and each step needs its own time budget so one stuck component cannot stall
 * the whole shutdown for ever.
 */

/** Names of the built-in phases, in run order. */
export const ShutdownPhase = {
  /** Before the node stops accepting external requests. */
  BeforeServiceUnbind: "before-service-unbind",
  /** Stop accepting new external requests (unbind HTTP ports, ...). */
  ServiceUnbind: "service-unbind",
  /** Wait for in-flight external requests to complete. */
  ServiceRequestsDone: "service-requests-done",
  /** Final shutdown of external services. */
  ServiceStop: "service-stop",
  /** Application tasks that must run before the cluster part shuts down. */
  BeforeClusterShutdown: "before-cluster-shutdown",
  /** Graceful shutdown of the sharding regions: hand off their shards. */
  ClusterShardingShutdownRegion: "cluster-sharding-shutdown-region",
  /** Tell the cluster this member leaves, and wait until it is Exiting (or Removed). */
  ClusterLeave: "cluster-leave",
  /** Wait until the cluster has removed this member (singletons hand over here). */
  ClusterExiting: "cluster-exiting",
  /** This member is out of the cluster. */
  ClusterExitingDone: "cluster-exiting-done",
  /** Stop the membership driver (gossip, heartbeats). */
  ClusterShutdown: "cluster-shutdown",
  /** Application tasks that must run before the actor system stops. */
  BeforeActorSystemTerminate: "before-actor-system-terminate",
  /** Stop every actor, then the system (remoting follows the system). */
  ActorSystemTerminate: "actor-system-terminate",
} as const;

/** A built-in phase name. */
export type BuiltInShutdownPhase = (typeof ShutdownPhase)[keyof typeof ShutdownPhase];

/** How one phase runs. */
export interface PhaseSettings {
  /** The phase's tasks together must finish within this many milliseconds. > 0. */
  readonly timeoutMs: number;
  /** On a task failure or the timeout: true = log and go on with the next phase;
   * false = abort the shutdown (no further phase runs). */
  readonly recover: boolean;
  /** false = the phase's tasks are skipped (the phase keeps its place in the order). */
  readonly enabled: boolean;
}

/** A phase: its name, the phases that must run before it, and its settings. */
export interface PhaseDefinition extends PhaseSettings {
  readonly name: string;
  readonly dependsOn: readonly string[];
}

/** The timeout of every phase that does not set its own (Akka: default-phase-timeout). */
export const DEFAULT_PHASE_TIMEOUT_MS = 5_000;

/** Phases with a timeout other than the default (hand-off and removal take longer). */
const LONGER_TIMEOUTS_MS: Readonly<Record<string, number>> = {
  [ShutdownPhase.ClusterShardingShutdownRegion]: 10_000,
  [ShutdownPhase.ClusterExiting]: 10_000,
  [ShutdownPhase.ActorSystemTerminate]: 10_000,
};

/** Built-in phases in run order; each depends on the one before it. */
export const BUILT_IN_PHASE_NAMES: readonly BuiltInShutdownPhase[] = Object.freeze(
  Object.values(ShutdownPhase),
);

/**
 * The built-in phase definitions with their defaults; `defaultTimeoutMs` replaces the
 * 5 s default of the phases that do not have a longer one of their own.
 */
export function builtInPhases(
  defaultTimeoutMs: number = DEFAULT_PHASE_TIMEOUT_MS,
): readonly PhaseDefinition[] {
  return BUILT_IN_PHASE_NAMES.map((name, i) =>
    Object.freeze({
      name,
      dependsOn: i === 0 ? [] : [BUILT_IN_PHASE_NAMES[i - 1] as string],
      timeoutMs: LONGER_TIMEOUTS_MS[name] ?? defaultTimeoutMs,
      recover: true,
      enabled: true,
    }),
  );
}
