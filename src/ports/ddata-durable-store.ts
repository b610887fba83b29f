/**
 * DDataDurableStore port: where a replicator keeps its durable keys (docs/distributed-data.md),
 * so their values survive a restart of the member, or of the whole cluster. Synchronous on
 * purpose: the replicator loads everything before it serves and writes each change before
 * it acknowledges it. Values are opaque serialized envelopes (serializer id + bytes).
 */
import { copyBytes } from "../base/bytes.js";
import { ShardkitError } from "../base/errors.js";

export interface DurableEntry {
  readonly serializerId: number;
  readonly bytes: Uint8Array;
}

export interface DDataDurableStore {
  /** Where the data lives (a file path), for error messages. */
  readonly location: string;
  /** Every stored key. @throws DurableStoreError when the store cannot be read. */
  loadAll(): Map<string, DurableEntry>;
  /** Writes (replaces) one key; durable when it returns. */
  store(key: string, entry: DurableEntry): void;
  close(): void;
}

/** The durable store cannot be opened, read or written (names the file). */
export class DurableStoreError extends ShardkitError {
  constructor(location: string, reason: string, key?: string) {
    super(
      "DDATA_DURABLE_STORE",
      `distributed data durable store ${location}${key === undefined ? "" : ` (key "${key}")`}: ${reason}`,
      key === undefined ? { location, reason } : { location, reason, key },
    );
  }
}

/** In-memory durable store (tests and the simulator: survives a simulated crash). */
export class MemoryDDataDurableStore implements DDataDurableStore {
  readonly entries = new Map<string, DurableEntry>();
  constructor(readonly location = "memory") {}
  loadAll(): Map<string, DurableEntry> {
    return new Map(this.entries);
  }
  store(key: string, entry: DurableEntry): void {
    this.entries.set(key, { serializerId: entry.serializerId, bytes: copyBytes(entry.bytes) });
  }
  close(): void {}
}
