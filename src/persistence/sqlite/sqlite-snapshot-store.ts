/**
 * SnapshotStore on SQLite: one row per (persistence_id, sequence_nr), saved with an
 * upsert so saving again at a sequence number replaces the snapshot. Snapshots are
 * rare and large, so they are written directly (no group commit). A statement that finds
 * another connection's write lock taken is retried on a timer (sqlite-busy.ts).
 */
import type Database from "better-sqlite3";
import { PersistenceStoreError } from "../../ports/journal.js";
import type {
  SnapshotCriteria,
  SnapshotPayload,
  SnapshotStore,
  StoredSnapshot,
} from "../../ports/snapshot-store.js";
import {
  assertPersistenceId,
  checkSnapshot,
  type SnapshotBounds,
  snapshotBounds,
} from "../persistence-input.js";
import { resolveSnapshotSettings, type SnapshotSettings } from "../persistence-settings.js";
import { type BusyWait, untilUnlocked } from "./sqlite-busy.js";
import { asBuffer, asBytes, type SqliteTables } from "./sqlite-schema.js";
import { defaultSqliteSettings } from "./sqlite-settings.js";

interface SnapshotRow {
  sequence_nr: number;
  timestamp_ms: number;
  serializer_id: number;
  payload: Buffer;
}

export interface SqliteSnapshotStoreOptions {
  readonly snapshot?: Partial<SnapshotSettings>;
  /** How to wait for another connection's write lock (default: the SQLite defaults). */
  readonly busy?: BusyWait;
}

const MATCH = `persistence_id = @id AND sequence_nr BETWEEN @minSeqNr AND @maxSeqNr
  AND timestamp_ms BETWEEN @minTimestampMs AND @maxTimestampMs`;

/** SnapshotStore on one SQLite connection. */
export class SqliteSnapshotStore implements SnapshotStore {
  readonly settings: SnapshotSettings;
  private readonly upsert: Database.Statement;
  private readonly latest: Database.Statement<[SnapshotBounds & { id: string }], SnapshotRow>;
  private readonly remove: Database.Statement<[SnapshotBounds & { id: string }]>;
  private readonly busy: BusyWait;

  /** `db` must have the schema (see `migrateSqlite`); the store does not close it. */
  constructor(
    db: Database.Database,
    tables: SqliteTables,
    options: SqliteSnapshotStoreOptions = {},
  ) {
    this.settings = resolveSnapshotSettings(options.snapshot);
    this.busy = options.busy ?? defaultSqliteSettings;
    const s = tables.snapshot;
    this.upsert = db.prepare(
      `INSERT INTO ${s} (persistence_id, sequence_nr, timestamp_ms, serializer_id, payload)
       VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (persistence_id, sequence_nr) DO UPDATE SET timestamp_ms = excluded.timestamp_ms,
         serializer_id = excluded.serializer_id, payload = excluded.payload`,
    );
    this.latest = db.prepare(
      `SELECT sequence_nr, timestamp_ms, serializer_id, payload FROM ${s} WHERE ${MATCH}
       ORDER BY sequence_nr DESC LIMIT 1`,
    );
    this.remove = db.prepare(`DELETE FROM ${s} WHERE ${MATCH}`);
  }

  async save(
    persistenceId: string,
    sequenceNr: number,
    timestampMs: number,
    snapshot: SnapshotPayload,
  ): Promise<void> {
    checkSnapshot(persistenceId, sequenceNr, timestampMs, snapshot, this.settings);
    try {
      const bytes = asBuffer(snapshot.bytes);
      await untilUnlocked(
        () => this.upsert.run(persistenceId, sequenceNr, timestampMs, snapshot.serializerId, bytes),
        this.busy,
      );
    } catch (error) {
      throw new PersistenceStoreError("saveSnapshot", persistenceId, error);
    }
  }

  async loadLatest(
    persistenceId: string,
    criteria?: SnapshotCriteria,
  ): Promise<StoredSnapshot | undefined> {
    assertPersistenceId(persistenceId);
    let row: SnapshotRow | undefined;
    try {
      const bounds = { id: persistenceId, ...snapshotBounds(criteria) };
      row = await untilUnlocked(() => this.latest.get(bounds), this.busy);
    } catch (error) {
      throw new PersistenceStoreError("loadSnapshot", persistenceId, error);
    }
    if (row === undefined) return undefined;
    return {
      persistenceId,
      sequenceNr: row.sequence_nr,
      timestampMs: row.timestamp_ms,
      serializerId: row.serializer_id,
      bytes: asBytes(row.payload),
    };
  }

  async deleteUpTo(persistenceId: string, criteria: SnapshotCriteria): Promise<void> {
    assertPersistenceId(persistenceId);
    try {
      const bounds = { id: persistenceId, ...snapshotBounds(criteria) };
      await untilUnlocked(() => this.remove.run(bounds), this.busy);
    } catch (error) {
      throw new PersistenceStoreError("deleteSnapshots", persistenceId, error);
    }
  }
}
