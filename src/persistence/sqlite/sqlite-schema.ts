/**
 * The SQLite schema of the journal and snapshot store, created idempotently when a
 * plugin opens the database (one file holds everything; `tablePrefix` lets several
 * systems share it).
 *
 * - `<p>journal`: one row per event, primary key (persistence_id, sequence_nr): the
 *   uniqueness behind optimistic concurrency. Tags are a JSON array (NULL for none).
 * - `<p>journal_deleted`: per id, the highest sequence number removed by deleteTo, so
 *   the highest sequence number survives deleting every event.
 * - `<p>snapshot`: one row per (persistence_id, sequence_nr).
 *
 * Plain rowid tables (not WITHOUT ROWID): payloads may be large, and SQLite keeps large
 * rows best in rowid tables.
 */
import type Database from "better-sqlite3";

/** The table names for one prefix. */
export interface SqliteTables {
  readonly journal: string;
  readonly deleted: string;
  readonly snapshot: string;
}

export function sqliteTables(prefix: string): SqliteTables {
  return {
    journal: `${prefix}journal`,
    deleted: `${prefix}journal_deleted`,
    snapshot: `${prefix}snapshot`,
  };
}

/** Creates the tables if needed (idempotent). `prefix` must already be validated. */
export function migrateSqlite(db: Database.Database, prefix: string): SqliteTables {
  const t = sqliteTables(prefix);
  db.exec(`
    CREATE TABLE IF NOT EXISTS ${t.journal} (
      persistence_id TEXT NOT NULL,
      sequence_nr INTEGER NOT NULL,
      serializer_id INTEGER NOT NULL,
      payload BLOB NOT NULL,
      tags TEXT,
      timestamp_ms INTEGER NOT NULL,
      PRIMARY KEY (persistence_id, sequence_nr)
    );
    CREATE TABLE IF NOT EXISTS ${t.deleted} (
      persistence_id TEXT NOT NULL PRIMARY KEY,
      deleted_to INTEGER NOT NULL
    );
    CREATE TABLE IF NOT EXISTS ${t.snapshot} (
      persistence_id TEXT NOT NULL,
      sequence_nr INTEGER NOT NULL,
      timestamp_ms INTEGER NOT NULL,
      serializer_id INTEGER NOT NULL,
      payload BLOB NOT NULL,
      PRIMARY KEY (persistence_id, sequence_nr)
    );
  `);
  return t;
}

/** A Buffer view of `bytes` (no copy): the driver binds Buffers as BLOBs. */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** A plain Uint8Array view of a driver Buffer (no copy), so every plugin returns one type. */
export function asBytes(buf: Uint8Array): Uint8Array {
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}
