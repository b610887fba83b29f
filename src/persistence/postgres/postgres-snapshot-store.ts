/**
 * SnapshotStore on PostgreSQL: one row per (persistence_id, sequence_nr), saved with an
 * upsert so saving again at a sequence number replaces the snapshot. Snapshots are
 * rare and large, so they are written directly (no group commit).
 */

import type pg from "pg";
import { PersistenceStoreError } from "../../ports/journal.js";
import type {
  SnapshotCriteria,
  SnapshotPayload,
  SnapshotStore,
  StoredSnapshot,
} from "../../ports/snapshot-store.js";
import { assertPersistenceId, checkSnapshot, snapshotBounds } from "../persistence-input.js";
import { resolveSnapshotSettings, type SnapshotSettings } from "../persistence-settings.js";
import { survivePoolErrors } from "./pool-errors.js";
import {
  asBytes,
  migratePostgres,
  type PostgresTables,
  postgresTables,
} from "./postgres-schema.js";
import { type PostgresSettings, resolvePostgresSettings } from "./postgres-settings.js";

export interface PostgresSnapshotStoreOptions extends Partial<PostgresSettings> {
  readonly pool: pg.Pool;
  readonly snapshot?: Partial<SnapshotSettings>;
}

interface SnapshotRow {
  sequence_nr: string;
  timestamp_ms: string;
  serializer_id: string;
  payload: Buffer;
}

const MATCH = `persistence_id = $1 AND sequence_nr BETWEEN $2 AND $3
  AND timestamp_ms BETWEEN $4 AND $5`;

/** SnapshotStore on a PostgreSQL pool. */
export class PostgresSnapshotStore implements SnapshotStore {
  readonly settings: SnapshotSettings;
  readonly pgSettings: PostgresSettings;
  readonly tables: PostgresTables;
  private readonly pool: pg.Pool;
  private schema: Promise<unknown> | undefined;

  constructor(options: PostgresSnapshotStoreOptions) {
    const { pool, snapshot, ...rest } = options;
    this.pool = pool;
    survivePoolErrors(pool);
    this.settings = resolveSnapshotSettings(snapshot);
    this.pgSettings = resolvePostgresSettings(rest);
    this.tables = postgresTables(this.pgSettings.tablePrefix);
  }

  async save(
    persistenceId: string,
    sequenceNr: number,
    timestampMs: number,
    snapshot: SnapshotPayload,
  ): Promise<void> {
    checkSnapshot(persistenceId, sequenceNr, timestampMs, snapshot, this.settings);
    await this.query(
      "saveSnapshot",
      persistenceId,
      `INSERT INTO ${this.tables.snapshot} (persistence_id, sequence_nr, timestamp_ms, serializer_id, payload)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (persistence_id, sequence_nr) DO UPDATE SET timestamp_ms = EXCLUDED.timestamp_ms,
         serializer_id = EXCLUDED.serializer_id, payload = EXCLUDED.payload`,
      [persistenceId, sequenceNr, timestampMs, snapshot.serializerId, snapshot.bytes],
    );
  }

  async loadLatest(
    persistenceId: string,
    criteria?: SnapshotCriteria,
  ): Promise<StoredSnapshot | undefined> {
    assertPersistenceId(persistenceId);
    const r = await this.query<SnapshotRow>(
      "loadSnapshot",
      persistenceId,
      `SELECT sequence_nr, timestamp_ms, serializer_id, payload FROM ${this.tables.snapshot}
       WHERE ${MATCH} ORDER BY sequence_nr DESC LIMIT 1`,
      this.matchValues(persistenceId, criteria),
    );
    const row = r.rows[0];
    if (row === undefined) return undefined;
    return {
      persistenceId,
      sequenceNr: Number(row.sequence_nr),
      timestampMs: Number(row.timestamp_ms),
      serializerId: Number(row.serializer_id),
      bytes: asBytes(row.payload),
    };
  }

  async deleteUpTo(persistenceId: string, criteria: SnapshotCriteria): Promise<void> {
    assertPersistenceId(persistenceId);
    await this.query(
      "deleteSnapshots",
      persistenceId,
      `DELETE FROM ${this.tables.snapshot} WHERE ${MATCH}`,
      this.matchValues(persistenceId, criteria),
    );
  }

  private matchValues(persistenceId: string, criteria: SnapshotCriteria | undefined): unknown[] {
    const b = snapshotBounds(criteria);
    return [persistenceId, b.minSeqNr, b.maxSeqNr, b.minTimestampMs, b.maxTimestampMs];
  }

  private ensureSchema(): Promise<unknown> {
    if (!this.pgSettings.createSchema) return Promise.resolve();
    this.schema ??= migratePostgres(this.pool, this.pgSettings.tablePrefix).catch((error) => {
      this.schema = undefined;
      throw error;
    });
    return this.schema;
  }

  private async query<R extends pg.QueryResultRow>(
    operation: string,
    persistenceId: string,
    text: string,
    values: unknown[],
  ): Promise<pg.QueryResult<R>> {
    try {
      await this.ensureSchema();
      return await this.pool.query<R>(text, values);
    } catch (error) {
      throw new PersistenceStoreError(operation, persistenceId, error);
    }
  }
}
