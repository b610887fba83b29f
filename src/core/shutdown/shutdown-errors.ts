/**
 * Typed failures of coordinated shutdown (docs/architecture.md, house rule 3): callers branch on
 * `code`, never on the message.
 */
import { ShardkitError } from "../../base/errors.js";

/** A task was added to a phase that does not exist. */
export class UnknownShutdownPhaseError extends ShardkitError {
  readonly phase: string;
  constructor(phase: string, known: readonly string[]) {
    super(
      "SHUTDOWN_PHASE_UNKNOWN",
      `unknown shutdown phase "${phase}" (known: ${known.join(", ")})`,
      { phase, known },
    );
    this.phase = phase;
  }
}

/** A task was added to a phase that has already started (or the shutdown is over). */
export class ShutdownPhaseStartedError extends ShardkitError {
  readonly phase: string;
  readonly task: string;
  constructor(phase: string, task: string) {
    super(
      "SHUTDOWN_PHASE_STARTED",
      `cannot add task "${task}" to shutdown phase "${phase}": the phase has already started`,
      { phase, task },
    );
    this.phase = phase;
    this.task = task;
  }
}

/** Why a shutdown stopped before its last phase. */
export type ShutdownAbortCause = "task-failed" | "timeout";

/**
 * A phase with `recover: false` failed or timed out, so no further phase ran (the actor
 * system may still be running). `cause` is the task's error when a task failed.
 */
export class ShutdownAbortedError extends ShardkitError {
  readonly phase: string;
  readonly abortCause: ShutdownAbortCause;
  constructor(reason: string, phase: string, abortCause: ShutdownAbortCause, error?: unknown) {
    super(
      "SHUTDOWN_ABORTED",
      `coordinated shutdown (${reason}) aborted in phase "${phase}": ${
        abortCause === "timeout" ? "the phase timed out" : "a task failed"
      }`,
      { reason, phase, abortCause, ...(error !== undefined ? { error } : {}) },
    );
    this.phase = phase;
    this.abortCause = abortCause;
    if (error !== undefined) this.cause = error;
  }
}
