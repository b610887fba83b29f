/**
 * Argument checks shared by the Journal plugins, so every plugin treats the same
 * inputs the same way. Malformed arguments (a sequence number of 0, an empty append)
 * are programmer errors and fail an assert; an append that is well formed but exceeds
 * a bound is an expected failure and gets a JournalRejectedError.
 */
import { assert, fail } from "../base/assert.js";
import {
  FencedWriteError,
  isWriteFence,
  type JournalEvent,
  JournalRejectedError,
  type WriteFence,
} from "../ports/journal.js";
import {
  type SnapshotCriteria,
  type SnapshotPayload,
  SnapshotTooLargeError,
} from "../ports/snapshot-store.js";
import type { JournalSettings, SnapshotSettings } from "./persistence-settings.js";

/** Largest sequence number / timestamp the journals accept (exact in a JS number). */
const SEQ_NR_MAX = Number.MAX_SAFE_INTEGER;

export function assertPersistenceId(persistenceId: string): void {
  assert(
    typeof persistenceId === "string" && persistenceId.length > 0,
    "persistenceId must be a non-empty string",
  );
}

export function assertSeqNr(n: number, what: string, min = 1): void {
  if (!(Number.isSafeInteger(n) && n >= min && n <= SEQ_NR_MAX))
    fail(`${what} must be an integer >= ${min}, got ${n}`);
}

/**
 * Checks an append and returns its payload size in bytes.
 * @throws JournalRejectedError ("too-large") when it alone exceeds a batch bound.
 */
export function checkAppend(
  persistenceId: string,
  expectedSeqNr: number,
  events: readonly JournalEvent[],
  settings: JournalSettings,
  fence?: WriteFence,
): number {
  assertPersistenceId(persistenceId);
  if (fence !== undefined) {
    checkFenceInput(fence);
    if (fence.expired?.() === true)
      throw new FencedWriteError(fence, fence.token, persistenceId, true);
  }
  assertSeqNr(expectedSeqNr, "expectedSeqNr");
  assert(Array.isArray(events) && events.length > 0, "append needs at least one event");
  assertSeqNr(expectedSeqNr + events.length - 1, "last sequence number");
  let bytes = 0;
  for (const e of events) {
    assert(e.bytes instanceof Uint8Array, "event bytes must be a Uint8Array");
    if (!(Number.isInteger(e.serializerId) && e.serializerId >= 0 && e.serializerId <= 0xffff_ffff))
      fail(`serializerId must be an integer in [0, 2^32-1], got ${e.serializerId}`);
    if (!Number.isSafeInteger(e.timestampMs))
      fail(`timestampMs must be an integer, got ${e.timestampMs}`);
    assert(
      e.tags === undefined ||
        (Array.isArray(e.tags) && e.tags.every((t: unknown) => typeof t === "string")),
      "tags must be an array of strings",
    );
    bytes += e.bytes.byteLength;
  }
  if (events.length > settings.batchEventsMax)
    throw new JournalRejectedError(
      "too-large",
      persistenceId,
      `${events.length} events (batchEventsMax=${settings.batchEventsMax})`,
    );
  if (bytes > settings.batchBytesMax)
    throw new JournalRejectedError(
      "too-large",
      persistenceId,
      `${bytes} bytes (batchBytesMax=${settings.batchBytesMax})`,
    );
  return bytes;
}

/** A fence must have a non-empty key and a safe integer token >= 0 (programmer error otherwise). */
export function checkFenceInput(fence: WriteFence): void {
  assert(isWriteFence(fence) && fence.key.length > 0, "fence must be { key, token >= 0 }");
}

/** Checks read arguments and returns the effective limit. */
export function readLimit(
  persistenceId: string,
  fromSeqNr: number,
  toSeqNr: number,
  max: number | undefined,
  settings: JournalSettings,
  fence?: WriteFence,
): number {
  assertPersistenceId(persistenceId);
  if (fence !== undefined) checkFenceInput(fence);
  assertSeqNr(fromSeqNr, "fromSeqNr", 0);
  assertSeqNr(toSeqNr, "toSeqNr", 0);
  if (max === undefined) return settings.readBatchMax;
  assertSeqNr(max, "max", 0);
  return Math.min(max, settings.readBatchMax);
}

/** Criteria with every bound filled in (missing bounds are unbounded). */
export interface SnapshotBounds {
  readonly minSeqNr: number;
  readonly maxSeqNr: number;
  readonly minTimestampMs: number;
  readonly maxTimestampMs: number;
}

export function snapshotBounds(criteria: SnapshotCriteria = {}): SnapshotBounds {
  const b = {
    minSeqNr: criteria.minSeqNr ?? 0,
    maxSeqNr: criteria.maxSeqNr ?? Number.MAX_SAFE_INTEGER,
    minTimestampMs: criteria.minTimestampMs ?? Number.MIN_SAFE_INTEGER,
    maxTimestampMs: criteria.maxTimestampMs ?? Number.MAX_SAFE_INTEGER,
  };
  for (const [k, v] of Object.entries(b))
    if (!Number.isSafeInteger(v)) fail(`snapshot criteria ${k} must be an integer, got ${v}`);
  return b;
}

/** True when a snapshot at (seqNr, timestampMs) matches `b`. */
export function snapshotMatches(b: SnapshotBounds, seqNr: number, timestampMs: number): boolean {
  return (
    seqNr >= b.minSeqNr &&
    seqNr <= b.maxSeqNr &&
    timestampMs >= b.minTimestampMs &&
    timestampMs <= b.maxTimestampMs
  );
}

/**
 * Shared argument checks of `save`.
 * @throws SnapshotTooLargeError beyond snapshotBytesMax.
 */
export function checkSnapshot(
  persistenceId: string,
  sequenceNr: number,
  timestampMs: number,
  snapshot: SnapshotPayload,
  settings: SnapshotSettings,
): void {
  assertPersistenceId(persistenceId);
  assertSeqNr(sequenceNr, "sequenceNr", 0);
  if (!Number.isSafeInteger(timestampMs))
    fail(`timestampMs must be an integer, got ${timestampMs}`);
  assert(snapshot.bytes instanceof Uint8Array, "snapshot bytes must be a Uint8Array");
  if (
    !(
      Number.isInteger(snapshot.serializerId) &&
      snapshot.serializerId >= 0 &&
      snapshot.serializerId <= 0xffff_ffff
    )
  )
    fail(`serializerId must be an integer in [0, 2^32-1], got ${snapshot.serializerId}`);
  if (snapshot.bytes.byteLength > settings.snapshotBytesMax)
    throw new SnapshotTooLargeError(
      persistenceId,
      snapshot.bytes.byteLength,
      settings.snapshotBytesMax,
    );
}
