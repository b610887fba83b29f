/**
 * Runs a node's coordinated shutdown when the process receives SIGTERM or SIGINT, then
 * exits with the configured code. This is how `kill <pid>`, Ctrl-C, systemd and
 * Kubernetes (SIGTERM, then SIGKILL after the grace period) stop a shardkit node
 * gracefully: the node leaves the cluster before the process goes away.
 *
 * - The first signal calls `run(reason)` with "sigterm" / "sigint" (other signals: their
 *   lower-case name); when it resolves the exit code is `exitCode` (default 0), when it
 *   rejects (an aborted shutdown) `failureExitCode` (default 1).
 * - A second signal while the shutdown runs exits at once with `failureExitCode`
 *   (`forceOnRepeat`, default true), so a stuck shutdown can still be interrupted.
 * - `exit: true` (default) calls process.exit; `exit: false` only sets process.exitCode,
 *   lets the event loop drain, and removes the handlers so a later signal has Node's
 *   default effect again.
 *
 * Opting out (the `runOnSignals` setting, see docs/shutdown.md) means not calling this:
 * installing a listener replaces Node's default "terminate at once" reaction, so only
 * the code that owns the process should do it. Disposing the result removes the listeners.
 */
import type { Disposable } from "../../base/disposable.js";
import { ConfigError } from "../../base/errors.js";
import type { Logger } from "../../ports/logger.js";

/** The part of `process` the handlers use (a fake one in tests). */
export interface SignalTarget {
  on(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
  removeListener(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
  exit(code: number): void;
  exitCode?: number | string | undefined;
}

/** Options of {@link installSignalHandlers}. */
export interface SignalHandlerOptions {
  /** Signals that start the shutdown. Default ["SIGTERM", "SIGINT"]. */
  readonly signals?: readonly NodeJS.Signals[];
  /** Exit code after a completed shutdown, 0..255. Default 0. */
  readonly exitCode?: number;
  /** Exit code after an aborted shutdown or a forced exit, 0..255. Default 1. */
  readonly failureExitCode?: number;
  /** Call process.exit once the shutdown is over (else only set process.exitCode). Default true. */
  readonly exit?: boolean;
  /** A second signal during the shutdown exits at once. Default true. */
  readonly forceOnRepeat?: boolean;
  /** Where to log the signal and the outcome. Default: nothing is logged. */
  readonly logger?: Logger;
  /** The process to listen on and exit. Default `process`. */
  readonly target?: SignalTarget;
}

/** The default signals. */
export const SHUTDOWN_SIGNALS: readonly NodeJS.Signals[] = Object.freeze(["SIGTERM", "SIGINT"]);

/** The shutdown reason for a signal: "sigterm", "sigint", ... */
export function shutdownReasonOfSignal(signal: NodeJS.Signals): string {
  return signal.toLowerCase();
}

/**
 * On the first of `signals`: `run(reason)`, then exit (see the module comment). Returns
 * a Disposable that removes the listeners.
 */
export function installSignalHandlers(
  run: (reason: string) => Promise<unknown>,
  options: SignalHandlerOptions = {},
): Disposable {
  const signals = options.signals ?? SHUTDOWN_SIGNALS;
  const exitCode = exitCodeOf("signals.exitCode", options.exitCode ?? 0);
  const failureExitCode = exitCodeOf("signals.failureExitCode", options.failureExitCode ?? 1);
  const exit = options.exit ?? true;
  const forceOnRepeat = options.forceOnRepeat ?? true;
  const target: SignalTarget = options.target ?? process;
  const log = options.logger?.child({ component: "signals" });
  let running = false;
  let installed = true;

  const finish = (code: number): void => {
    target.exitCode = code;
    if (exit) target.exit(code);
    else dispose();
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    if (running) {
      if (!forceOnRepeat) return;
      log?.warn("second signal during shutdown: exiting now", {
        signal,
        exitCode: failureExitCode,
      });
      target.exitCode = failureExitCode;
      target.exit(failureExitCode);
      return;
    }
    running = true;
    log?.info("signal received: running coordinated shutdown", { signal });
    let result: Promise<unknown>;
    try {
      result = run(shutdownReasonOfSignal(signal));
    } catch (error) {
      result = Promise.reject(error);
    }
    result.then(
      () => finish(exitCode),
      (error: unknown) => {
        log?.error("shutdown after signal failed", { signal, error });
        finish(failureExitCode);
      },
    );
  };
  const dispose = (): void => {
    if (!installed) return;
    installed = false;
    for (const s of signals) target.removeListener(s, onSignal);
  };
  for (const s of signals) target.on(s, onSignal);
  return { dispose };
}

function exitCodeOf(key: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > 255)
    throw new ConfigError(key, value, "an integer exit code in [0, 255]");
  return value;
}
