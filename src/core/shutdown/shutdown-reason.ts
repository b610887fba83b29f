/**
 * Why a node shuts down. The reason is fixed by the first `run(reason)` of a coordinated
 * shutdown and is what that run's promise resolves with; later runs return the same
 * promise and do not change it. Components read it (e.g. to skip a graceful hand-off
 * when the member was downed) and exit code policies can branch on it.
 *
 * The known reasons are a closed list so `switch` statements over them are exhaustive;
 * an application may pass its own string (e.g. "deploy"), which is kept verbatim.
 */

/** The reasons shardkit itself uses. */
export const KNOWN_SHUTDOWN_REASONS = [
  /** Nothing said why. */
  "unknown",
  /** The application called `shutdown()` / `run("user")`. */
  "user",
  /** The process received SIGTERM (runtime/node signal handler). */
  "sigterm",
  /** The process received SIGINT (Ctrl-C). */
  "sigint",
  /** This member was downed (split brain resolver or an operator). */
  "cluster-downing",
  /** This member was told to leave by another node (it saw itself Leaving or Exiting). */
  "cluster-leaving",
  /** This member was removed from the cluster without having started a shutdown. */
  "cluster-removed",
] as const;

/** A reason shardkit itself uses. */
export type KnownShutdownReason = (typeof KNOWN_SHUTDOWN_REASONS)[number];

/**
 * Why a node shuts down: one of the known reasons, or an application's own string.
 * (`string & {}` keeps editor completion for the known ones.)
 */
export type ShutdownReason = KnownShutdownReason | (string & {});

/** True if `reason` is one of the reasons shardkit itself uses. */
export function isKnownShutdownReason(reason: string): reason is KnownShutdownReason {
  return (KNOWN_SHUTDOWN_REASONS as readonly string[]).includes(reason);
}
