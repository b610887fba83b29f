/**
 * SnapshotStore port: point-in-time states of event-sourced entities, so recovery
 * replays only the events after the latest snapshot. Keyed by (persistenceId,
 * sequenceNr): saving again at the same sequence number replaces the snapshot. Like
 * events, a snapshot is a serializer id and bytes.
 */
import { ShardkitError } from "../base/errors.js";

/** The serialized state. */
export interface SnapshotPayload {
  readonly serializerId: number;
  readonly bytes: Uint8Array;
}

/** A stored snapshot. */
export interface StoredSnapshot extends SnapshotPayload {
  readonly persistenceId: string;
  /** Sequence number of the last event the state includes. */
  readonly sequenceNr: number;
  /** Wall-clock time in ms since the epoch, chosen by the writer. */
  readonly timestampMs: number;
}

/** Which snapshots of one persistenceId an operation applies to (bounds inclusive). */
export interface SnapshotCriteria {
  readonly maxSeqNr?: number;
  readonly maxTimestampMs?: number;
  readonly minSeqNr?: number;
  readonly minTimestampMs?: number;
}

export interface SnapshotStore {
  /**
   * Stores a snapshot (replacing one at the same sequence number).
   * @throws SnapshotTooLargeError when bytes exceed snapshotBytesMax.
   * @throws PersistenceStoreError when the store failed.
   */
  save(
    persistenceId: string,
    sequenceNr: number,
    timestampMs: number,
    snapshot: SnapshotPayload,
  ): Promise<void>;
  /** The matching snapshot with the highest sequence number, if any. */
  loadLatest(
    persistenceId: string,
    criteria?: SnapshotCriteria,
  ): Promise<StoredSnapshot | undefined>;
  /** Deletes every snapshot of the id that matches `criteria` (all of them for `{}`). */
  deleteUpTo(persistenceId: string, criteria: SnapshotCriteria): Promise<void>;
}

/** A snapshot larger than the store's snapshotBytesMax; nothing was written. */
export class SnapshotTooLargeError extends ShardkitError {
  constructor(persistenceId: string, bytes: number, snapshotBytesMax: number) {
    super(
      "SNAPSHOT_TOO_LARGE",
      `snapshot of ${persistenceId} has ${bytes} bytes (snapshotBytesMax=${snapshotBytesMax})`,
      { persistenceId, bytes, snapshotBytesMax },
    );
  }
}
