/** Typed failures of event-sourced entities. */
import { ShardkitError } from "../../base/errors.js";
import { formatIssues, type SchemaIssue } from "../../base/schema.js";

/** A side effect was added to an effect that cannot have any (`none`, `unhandled`, `stash`). */
export class InvalidEffectError extends ShardkitError {
  constructor(kind: string) {
    super("EFFECT_INVALID", `side effects cannot be added to a ${kind} effect`, { kind });
  }
}

/** Recovery (snapshot load, journal replay, decoding or an event handler) failed. */
export class EventSourcedRecoveryError extends ShardkitError {
  readonly persistenceId: string;
  constructor(persistenceId: string, cause: unknown) {
    super(
      "EVENT_SOURCED_RECOVERY_FAILED",
      `recovery of ${persistenceId} failed: ${cause instanceof Error ? cause.message : String(cause)}`,
      { persistenceId },
    );
    this.persistenceId = persistenceId;
    this.cause = cause;
  }
}

/**
 * Appending events failed (store error, rejection). The outcome may be unknown, so the
 * entity fails and, after its backoff, recovers again before writing.
 */
export class EventSourcedPersistError extends ShardkitError {
  readonly persistenceId: string;
  /** Sequence number of the first event of the failed append. */
  readonly seqNr: number;
  constructor(persistenceId: string, seqNr: number, cause: unknown) {
    super(
      "EVENT_SOURCED_PERSIST_FAILED",
      `persisting events of ${persistenceId} at sequence number ${seqNr} failed: ${
        cause instanceof Error ? cause.message : String(cause)
      }`,
      { persistenceId, seqNr },
    );
    this.persistenceId = persistenceId;
    this.seqNr = seqNr;
    this.cause = cause;
  }
}

/** A recovered event does not satisfy the behaviour's `eventSchema`. */
export class EventValidationError extends ShardkitError {
  readonly persistenceId: string;
  readonly sequenceNr: number;
  readonly issues: readonly SchemaIssue[];
  constructor(persistenceId: string, sequenceNr: number, issues: readonly SchemaIssue[]) {
    super(
      "EVENT_INVALID",
      `event ${sequenceNr} of ${persistenceId} does not match the event schema: ${formatIssues(issues)}`,
      { persistenceId, sequenceNr, issues },
    );
    this.persistenceId = persistenceId;
    this.sequenceNr = sequenceNr;
    this.issues = issues;
  }
}
