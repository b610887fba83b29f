/**
 * Journal port: the append-only event log of event-sourced entities, keyed by
 * (persistenceId, sequenceNr). Sequence numbers of one persistenceId start at 1 and
 * have no gaps.
 *
 * Optimistic concurrency is the journal's one hard promise: `append` succeeds only when
 * its first event's sequence number is exactly `highestSequenceNr + 1`, and the highest
 * sequence number never goes down (not even when events are deleted). So when two
 * incarnations of one entity write (a split brain, a hand-off gone wrong), the second
 * one to write gets a {@link JournalConflictError} instead of interleaving its events
 * with the first's: the last guard against double writes.
 *
 * Events are stored as a serializer id and bytes (the remoting serializer registry's
 * encoding), so the journal never needs to know the event types.
 */
import { ShardkitError } from "../base/errors.js";

/** One event to append. */
export interface JournalEvent {
  /** Id of the serializer that produced `bytes` (see SerializerRegistry). */
  readonly serializerId: number;
  readonly bytes: Uint8Array;
  /** Free-form labels for later queries by tag; default none. */
  readonly tags?: readonly string[];
  /** Wall-clock time of the event in ms since the epoch, chosen by the writer. */
  readonly timestampMs: number;
}

/** An event as stored. */
export interface PersistedEvent {
  readonly persistenceId: string;
  readonly sequenceNr: number;
  readonly serializerId: number;
  readonly bytes: Uint8Array;
  readonly tags: readonly string[];
  readonly timestampMs: number;
}

/**
 * The fencing token a write carries (docs/sharding.md, "Leases and fencing"): `key`
 * names what the token fences (a shard: `<type>/<shardId>`), `token` is the fencing
 * token of the shard lease held by the writer. The journal remembers, per key, the
 * newest token it has seen and refuses, in the same transaction as the write, any write
 * with an older one.
 */
export interface WriteFence {
  readonly key: string;
  readonly token: number;
  /**
   * True once the writer's own hold on the token has run out (a shard's lease deadline
   * passed, e.g. while its process was paused): the journal then refuses the append
   * before it reaches the store, whether or not another holder has taken over yet.
   */
  readonly expired?: () => boolean;
}

export interface Journal {
  /**
   * Appends `events` as sequence numbers `expectedSeqNr`, `expectedSeqNr + 1`, ...
   * All or nothing. Resolves once the events are durable. With `fence`, the append is
   * refused (nothing written) when the journal has seen a newer token for `fence.key`;
   * otherwise `fence.token` becomes the newest token of the key, atomically with the
   * append.
   *
   * @throws JournalConflictError when `expectedSeqNr` is not `highestSequenceNr + 1`
   *   (another writer got there first, or this writer lost track).
   * @throws JournalRejectedError when the append exceeds a bound or the journal is
   *   closed (nothing was written).
   * @throws FencedWriteError when `fence.token` is older than the newest token of its key.
   * @throws PersistenceStoreError when the store failed; the outcome is then unknown
   *   and the writer must recover (re-read the highest sequence number) before writing.
   */
  append(
    persistenceId: string,
    expectedSeqNr: number,
    events: readonly JournalEvent[],
    fence?: WriteFence,
  ): Promise<void>;
  /**
   * Makes `fence.token` the newest token of `fence.key` (a no-op when it already is):
   * a new lease holder calls it before it starts anything, so that from then on every
   * write of an older holder is refused, even if the new holder never writes.
   * @throws FencedWriteError when the journal has already seen a newer token.
   * Optional: a journal without it does not support fencing (and ignores `fence`).
   */
  advanceFence?(fence: WriteFence): Promise<void>;
  /**
   * Events with fromSeqNr <= sequenceNr <= toSeqNr in ascending order, at most
   * `max` of them and never more than the journal's `readBatchMax`: page through a
   * long history by calling again from the last sequence number + 1.
   */
  read(
    persistenceId: string,
    fromSeqNr: number,
    toSeqNr: number,
    max?: number,
  ): Promise<readonly PersistedEvent[]>;
  /** The highest sequence number ever written for the id (0 when none), deleted or not. */
  highestSequenceNr(persistenceId: string): Promise<number>;
  /**
   * Deletes the events with sequenceNr <= toSeqNr (toSeqNr may exceed the highest).
   * The highest sequence number is kept, so a new writer cannot reuse deleted numbers.
   */
  deleteTo(persistenceId: string, toSeqNr: number): Promise<void>;
  /**
   * Stops accepting appends and resolves once every accepted append has settled. Does
   * not close a connection or pool the journal was given.
   */
  close(): Promise<void>;
}

/** `append` at a sequence number that is not `highestSequenceNr + 1`. */
export class JournalConflictError extends ShardkitError {
  readonly persistenceId: string;
  /** The sequence number the rejected append wanted for its first event. */
  readonly seqNr: number;
  constructor(persistenceId: string, seqNr: number, highestSeqNr?: number) {
    super(
      "JOURNAL_CONFLICT",
      `journal conflict for ${persistenceId}: cannot append at sequence number ${seqNr}` +
        (highestSeqNr === undefined ? "" : ` (highest is ${highestSeqNr})`),
      { persistenceId, seqNr, highestSeqNr },
    );
    this.persistenceId = persistenceId;
    this.seqNr = seqNr;
  }
}

/** A write (or fence advance) carried a fencing token older than the newest one seen. */
export class FencedWriteError extends ShardkitError {
  readonly fenceKey: string;
  readonly token: number;
  readonly newestToken: number;
  /** `expired`: refused because the writer's own hold ran out (WriteFence.expired). */
  constructor(fence: WriteFence, newestToken: number, persistenceId?: string, expired = false) {
    const what = `write${persistenceId === undefined ? "" : ` for ${persistenceId}`} refused`;
    super(
      "FENCED_WRITE",
      expired
        ? `${what}: the hold on fencing token ${fence.token} of ${fence.key} ran out here (lease deadline passed)`
        : `${what}: fencing token ${fence.token} of ${fence.key} is older than ${newestToken} (another holder took the lease)`,
      { fenceKey: fence.key, token: fence.token, newestToken, persistenceId, expired },
    );
    this.fenceKey = fence.key;
    this.token = fence.token;
    this.newestToken = newestToken;
  }
}

/** True when `f` is a well-formed WriteFence (a key and a safe integer token >= 0). */
export function isWriteFence(f: unknown): f is WriteFence {
  if (typeof f !== "object" || f === null) return false;
  const o = f as { key?: unknown; token?: unknown };
  return typeof o.key === "string" && Number.isSafeInteger(o.token) && (o.token as number) >= 0;
}

/** Why an append was refused before anything was written. */
export const JournalRejection = {
  /** The append alone exceeds batchEventsMax or batchBytesMax. */
  TooLarge: "too-large",
  /** queuedEventsMax events are already waiting to be written (backpressure). */
  Overloaded: "overloaded",
  /** The journal was closed. */
  Closed: "closed",
} as const;
export type JournalRejection = (typeof JournalRejection)[keyof typeof JournalRejection];

/** An append refused before anything was written; retrying it as is may succeed only for "overloaded". */
export class JournalRejectedError extends ShardkitError {
  readonly reason: JournalRejection;
  constructor(reason: JournalRejection, persistenceId: string, detail: string) {
    super("JOURNAL_REJECTED", `append for ${persistenceId} rejected (${reason}): ${detail}`, {
      reason,
      persistenceId,
    });
    this.reason = reason;
  }
}

/**
 * The database failed (connection lost, disk full, ...). For a write the outcome is
 * unknown: the data may or may not have been committed. `cause` holds the driver error.
 */
export class PersistenceStoreError extends ShardkitError {
  readonly operation: string;
  constructor(operation: string, persistenceId: string | undefined, cause: unknown) {
    super(
      "PERSISTENCE_STORE_FAILED",
      `persistence ${operation}${persistenceId === undefined ? "" : ` for ${persistenceId}`} failed: ${
        cause instanceof Error ? cause.message : String(cause)
      }`,
      { operation, persistenceId },
    );
    this.operation = operation;
    this.cause = cause;
  }
}
