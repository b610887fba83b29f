/**
 * How sharding's internal data (coordinator events and snapshots, remembered-entity
 * batches and snapshots) is stored in a Journal / SnapshotStore: msgpack (the default
 * serializer, id 1) of plain data, checked on the way back in. Also the persistenceId
 * format of that data, which the `shardkit remove-sharding-data` tool relies on:
 *
 * - coordinator state of type T: `/sharding/T/coordinator`
 * - remembered entities of shard S of type T: `/sharding/T/shard/S`
 *
 * Entity persistenceIds (`Type|entityId`, persistenceIdOf) never start with `/`, and
 * entity type names cannot contain `/`, so the two never collide.
 */
import { ShardkitError } from "../../base/errors.js";
import type { Journal } from "../../ports/journal.js";
import type { SnapshotStore } from "../../ports/snapshot-store.js";
import { createMsgpackSerializer } from "../../protocol/msgpack-serializer.js";

/** Prefix of every persistenceId sharding writes. */
export const SHARDING_PERSISTENCE_ID_PREFIX = "/sharding/";

/** persistenceId of the coordinator state of `typeName`. */
export function coordinatorPersistenceId(typeName: string): string {
  return `${SHARDING_PERSISTENCE_ID_PREFIX}${typeName}/coordinator`;
}

/** persistenceId of the remembered entities of shard `shardId` of `typeName`. */
export function rememberPersistenceId(typeName: string, shardId: string): string {
  return `${rememberPersistenceIdPrefix(typeName)}${shardId}`;
}

/** Prefix shared by the remembered-entities persistenceIds of every shard of `typeName`. */
export function rememberPersistenceIdPrefix(typeName: string): string {
  return `${SHARDING_PERSISTENCE_ID_PREFIX}${typeName}/shard/`;
}

/** Stored sharding data that does not decode to what was written. */
export class ShardingStoreCorruptError extends ShardkitError {
  constructor(persistenceId: string, sequenceNr: number, detail: string) {
    super(
      "SHARDING_STORE_CORRUPT",
      `sharding data of ${persistenceId} at sequence number ${sequenceNr} is unreadable: ${detail}`,
      { persistenceId, sequenceNr },
    );
  }
}

const serializer = createMsgpackSerializer();

/** Encodes plain data for a journal or snapshot store. */
export function encodeShardingData(value: unknown): {
  readonly serializerId: number;
  readonly bytes: Uint8Array;
} {
  return { serializerId: serializer.id, bytes: serializer.toBinary(value) };
}

/**
 * Decodes what encodeShardingData wrote and checks its shape with `guard`.
 * @throws ShardingStoreCorruptError on a foreign serializer, bad bytes or a wrong shape.
 */
export function decodeShardingData<T>(
  persistenceId: string,
  sequenceNr: number,
  serializerId: number,
  bytes: Uint8Array,
  guard: (v: unknown) => v is T,
): T {
  if (serializerId !== serializer.id)
    throw new ShardingStoreCorruptError(
      persistenceId,
      sequenceNr,
      `serializer id ${serializerId}, expected ${serializer.id}`,
    );
  let value: unknown;
  try {
    value = serializer.fromBinary(bytes);
  } catch (e) {
    throw new ShardingStoreCorruptError(persistenceId, sequenceNr, String(e));
  }
  if (!guard(value))
    throw new ShardingStoreCorruptError(persistenceId, sequenceNr, "unexpected shape");
  return value;
}

/** Events read per journal round trip while replaying. */
const REPLAY_PAGE_EVENTS = 1_000;

/**
 * The events of `pid` after sequence number `after` up to `highest`, decoded and checked
 * with `guard`, in order, read in pages.
 * @throws ShardingStoreCorruptError on an event that does not decode.
 */
export async function replayShardingEvents<T>(
  journal: Journal,
  pid: string,
  after: number,
  highest: number,
  guard: (v: unknown) => v is T,
): Promise<T[]> {
  const out: T[] = [];
  let next = after + 1;
  while (next <= highest) {
    const page = await journal.read(pid, next, highest, REPLAY_PAGE_EVENTS);
    if (page.length === 0) break; // deleted up to a snapshot that is gone: nothing more
    for (const pe of page) {
      out.push(decodeShardingData(pid, pe.sequenceNr, pe.serializerId, pe.bytes, guard));
      next = pe.sequenceNr + 1;
    }
  }
  return out;
}

/** A snapshot at `at` covers everything before: drops the older events and snapshots. */
export async function compactShardingData(
  journal: Journal,
  snapshots: SnapshotStore,
  pid: string,
  at: number,
): Promise<void> {
  await journal.deleteTo(pid, at);
  await snapshots.deleteUpTo(pid, { maxSeqNr: at - 1 });
}
