/**
 * SnapshotStore on SQLite: one row per (persistence_id, sequence_nr), saved with an
 * upsert so saving again at a sequence number replaces the snapshot. Snapshots are
 * rare and large, so they are written directly (no group commit).
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
import { asBuffer, asBytes, type SqliteTables } from "./sqlite-schema.js";

interface SnapshotRow {
  sequence_nr: number;
  timestamp_ms: number;
  serializer_id: number;
  payload: Buffer;
}

export interface SqliteSnapshotStoreOptions {
  readonly snapshot?: Partial<SnapshotSettings>;
}

const MATCH = `persistence_id = @id AND sequence_nr BETWEEN @minSeqNr AND @maxSeqNr
  AND timestamp_ms BETWEEN @minTimestampMs AND @maxTimestampMs`;

/** SnapshotStore on one SQLite connection. */
export class SqliteSnapshotStore implements SnapshotStore {
  readonly settings: SnapshotSettings;
  private readonly upsert: Database.Statement;
  private readonly latest: Database.Statement<[SnapshotBounds & { id: string }], SnapshotRow>;
  private readonly remove: Database.Statement<[SnapshotBounds & { id: string }]>;

  /** `db` must have the schema (see `migrateSqlite`); the store does not close it. */
  constructor(
    db: Database.Database,
    tables: SqliteTables,
    options: SqliteSnapshotStoreOptions = {},
  ) {
    this.settings = resolveSnapshotSettings(options.snapshot);
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
      this.upsert.run(
        persistenceId,
        sequenceNr,
        timestampMs,
        snapshot.serializerId,
        asBuffer(snapshot.bytes),
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
      row = this.latest.get({ id: persistenceId, ...snapshotBounds(criteria) });
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
      this.remove.run({ id: persistenceId, ...snapshotBounds(criteria) });
    } catch (error) {
      throw new PersistenceStoreError("deleteSnapshots", persistenceId, error);
    }
  }
}
