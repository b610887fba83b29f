/**
 * Supervisor strategies: what happens to an actor whose handler throws (or whose
 * returned promise rejects). Attached per actor with `Behaviors.supervise`. The default,
 * as in Akka Typed, is stop. A failure never propagates beyond the failing actor.
 */
import { ConfigError } from "../base/errors.js";

export interface BackoffOptions {
  /** First delay before restarting, in ms. */
  readonly minBackoffMs: number;
  /** Upper bound of the exponentially growing delay, in ms. */
  readonly maxBackoffMs: number;
  /** Extra random fraction (0..1) added to each delay to spread restarts. */
  readonly randomFactor: number;
  /** After this long without failure the delay starts again at minBackoffMs. */
  readonly resetBackoffAfterMs?: number;
}

export type SupervisorStrategy =
  | { readonly type: "stop" }
  | { readonly type: "resume" }
  | {
      readonly type: "restart";
      /** Give up (stop) after this many restarts within `withinMs`; -1 = unlimited. */
      readonly maxRestarts: number;
      readonly withinMs: number;
      /** Restart after an exponentially growing delay; undefined = immediately. */
      readonly backoff?: BackoffOptions;
      /** Stop children on restart (default true, as in Akka Typed). */
      readonly stopChildren: boolean;
    };

export const SupervisorStrategy = {
  /** Stop the failing actor (the default). */
  stop: (): SupervisorStrategy => ({ type: "stop" }),
  /** Drop the failing message and keep the current state. */
  resume: (): SupervisorStrategy => ({ type: "resume" }),
  /** Recreate the actor from its initial behavior, state is lost, mailbox is kept. */
  restart: (
    opts: { maxRestarts?: number; withinMs?: number; stopChildren?: boolean } = {},
  ): SupervisorStrategy => ({
    type: "restart",
    maxRestarts: checkInt("maxRestarts", opts.maxRestarts ?? -1, -1),
    withinMs: checkInt("withinMs", opts.withinMs ?? 0, 0),
    stopChildren: opts.stopChildren ?? true,
  }),
  /** Restart after minBackoffMs, doubling each time up to maxBackoffMs, with jitter. */
  restartWithBackoff: (
    backoff: BackoffOptions,
    opts: { maxRestarts?: number; withinMs?: number; stopChildren?: boolean } = {},
  ): SupervisorStrategy => {
    checkInt("minBackoffMs", backoff.minBackoffMs, 0);
    checkInt("maxBackoffMs", backoff.maxBackoffMs, backoff.minBackoffMs);
    if (!(backoff.randomFactor >= 0 && backoff.randomFactor <= 1))
      throw new ConfigError("randomFactor", backoff.randomFactor, "a number in [0, 1]");
    return {
      type: "restart",
      maxRestarts: checkInt("maxRestarts", opts.maxRestarts ?? -1, -1),
      withinMs: checkInt("withinMs", opts.withinMs ?? 0, 0),
      stopChildren: opts.stopChildren ?? true,
      backoff: { ...backoff },
    };
  },
} as const;

function checkInt(key: string, value: number, min: number): number {
  if (!Number.isInteger(value) || value < min)
    throw new ConfigError(key, value, `an integer >= ${min}`);
  return value;
}

/** Delay before restart number `attempt` (0-based), jittered by `rand` in [0, 1). */
export function backoffDelayMs(b: BackoffOptions, attempt: number, rand: number): number {
  const exp = Math.min(b.maxBackoffMs, b.minBackoffMs * 2 ** Math.min(attempt, 30));
  return Math.min(b.maxBackoffMs, exp * (1 + rand * b.randomFactor));
}
