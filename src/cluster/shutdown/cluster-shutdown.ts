/**
 * Wires a node's Cluster and ActorSystem into its CoordinatedShutdown, the way Akka's
 * cluster extension does:
 *
 * - cluster-leave: `cluster.leave(self)`, then wait until self is Exiting, Down or
 *   Removed (or the phase times out); a node that is no member yet only stops trying to
 *   join;
 * - cluster-exiting: wait until self is Exiting (or Down/Removed, or the phase times out);
 * - cluster-exiting-done: tell the Cluster the exiting tasks are done
 *   (`exitingCompleted`), then wait until self is Removed (or Down, or the phase times
 *   out). Until then an exiting member neither marks gossip as seen nor confirms exiting,
 *   so the leader cannot remove it while earlier phases (the sharding hand-off) still run,
 *   also when another node made it leave (Akka's exiting-tasks hold);
 * - cluster-shutdown: stop the membership driver (gossip, heartbeats);
 * - actor-system-terminate: `system.terminate()` (remoting stops with the system);
 * - and the other direction: a member that sees itself Leaving/Exiting (someone else
 *   called leave), Down or Removed runs the shutdown with reason "cluster-leaving",
 *   "cluster-downing" or "cluster-removed". A member that is already shutting down keeps
 *   its first reason (run is idempotent).
 *
 * Why the removal trigger is a `registerOnMemberRemoved` callback: the Cluster reports
 * "downed or removed" only there and through its `onSelfRemoved` option, whose default
 * terminates the actor system at once, skipping the phases. The node that assembles the
 * Cluster must therefore pass an `onSelfRemoved` that does not terminate the system
 * (see docs/shutdown.md, "Wiring").
 */
import type { ActorSystem } from "../../actor/actor-system.js";
import { type Disposable, DisposableStack } from "../../base/disposable.js";
import { ShutdownPhase } from "../../core/shutdown/shutdown-phases.js";
import type { ShutdownReason } from "../../core/shutdown/shutdown-reason.js";
import type { Cluster } from "../membership/cluster.js";
import type { CoordinatedShutdown } from "./coordinated-shutdown.js";
import { type SelfExitEvent, type SelfExitState, SelfExitWatch } from "./self-exit-watch.js";

/** Task names (as they appear in logs and in `plan()`). */
export const ClusterShutdownTask = {
  Leave: "cluster-leave",
  AwaitExiting: "cluster-await-exiting",
  AwaitRemoval: "cluster-await-removal",
  StopMembership: "cluster-stop-membership",
  TerminateActorSystem: "actor-system-terminate",
} as const;

/** The reason a cluster-triggered shutdown runs with. */
export function shutdownReasonOfSelfExit(event: SelfExitEvent): ShutdownReason {
  switch (event) {
    case "leaving":
      return "cluster-leaving";
    case "downed":
      return "cluster-downing";
    case "removed":
      return "cluster-removed";
  }
}

const GONE: ReadonlySet<SelfExitState> = new Set(["not-member", "downed", "removed"]);
const OUT: ReadonlySet<SelfExitState> = new Set(["exiting", ...GONE]);

/**
 * Registers the cluster and actor-system tasks on `shutdown` and makes this member's
 * own exit (leaving, downed, removed) run it. Dispose to unregister (tasks of phases not
 * started yet are removed; the triggers stop). Install before the shutdown starts: a
 * shutdown past cluster-leave rejects the tasks (ShutdownPhaseStartedError).
 */
export function installClusterShutdown(
  shutdown: CoordinatedShutdown,
  cluster: Cluster,
  system: ActorSystem,
): Disposable {
  const stack = new DisposableStack();
  try {
    registerClusterTasks(stack, shutdown, cluster, system);
  } catch (error) {
    stack.dispose(); // e.g. the shutdown has already passed cluster-leave
    throw error;
  }
  return stack;
}

function registerClusterTasks(
  stack: DisposableStack,
  shutdown: CoordinatedShutdown,
  cluster: Cluster,
  system: ActorSystem,
): void {
  const watch = stack.add(new SelfExitWatch(cluster));
  const selfHostPort = `${cluster.self.address.host}:${cluster.self.address.port}`;
  stack.add(
    shutdown.addTask(ShutdownPhase.ClusterLeave, ClusterShutdownTask.Leave, async ({ signal }) => {
      // Not a member yet: the leave only stops its attempts to join (a process on its way
      // out must not become a member that then vanishes without leaving).
      if (watch.state === "not-member") {
        cluster.leave(selfHostPort);
        return;
      }
      if (OUT.has(watch.state)) return;
      cluster.leave(selfHostPort);
      await watch.until((s) => OUT.has(s), signal);
    }),
  );
  // Once exiting, the leader removes this member only after exitingCompleted (in
  // cluster-exiting-done): the tasks of the phases before it, the sharding hand-off among
  // them, finish even when someone else made this member leave.
  cluster.holdRemovalUntilExitingCompleted();
  stack.add({ dispose: () => cluster.exitingCompleted() });
  stack.add(
    shutdown.addTask(ShutdownPhase.ClusterExiting, ClusterShutdownTask.AwaitExiting, ({ signal }) =>
      watch.until((s) => OUT.has(s), signal),
    ),
  );
  stack.add(
    shutdown.addTask(
      ShutdownPhase.ClusterExitingDone,
      ClusterShutdownTask.AwaitRemoval,
      ({ signal }) => {
        cluster.exitingCompleted();
        return watch.until((s) => GONE.has(s), signal);
      },
    ),
  );
  stack.add(
    shutdown.addTask(ShutdownPhase.ClusterShutdown, ClusterShutdownTask.StopMembership, () =>
      cluster.stop(),
    ),
  );
  stack.add(addActorSystemTerminateTask(shutdown, system));
  stack.add(
    watch.onExit((event) => {
      // Failures are logged by the shutdown itself; nobody awaits this run.
      shutdown.run(shutdownReasonOfSelfExit(event)).catch(() => {});
    }),
  );
}

/** Registers `system.terminate()` in the actor-system-terminate phase. */
export function addActorSystemTerminateTask(
  shutdown: CoordinatedShutdown,
  system: ActorSystem,
): Disposable {
  return shutdown.addTask(
    ShutdownPhase.ActorSystemTerminate,
    ClusterShutdownTask.TerminateActorSystem,
    () => system.terminate(),
  );
}
