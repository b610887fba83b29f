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
 * - `<p>fence`: per fence key (a shard, `<type>/<shardId>`), the newest fencing token a
 *   write carried; fenced appends are checked against it in their transaction.
 * - `<p>lease`: shard (and other) leases with their fencing token (sqlite-lease.ts).
 *
 * Older databases gain the fence and lease tables on the next open (CREATE TABLE IF NOT
 * EXISTS): nothing else changed, so no data migration is needed.
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
  readonly fence: string;
  readonly lease: string;
}

export function sqliteTables(prefix: string): SqliteTables {
  return {
    journal: `${prefix}journal`,
    deleted: `${prefix}journal_deleted`,
    snapshot: `${prefix}snapshot`,
    fence: `${prefix}fence`,
    lease: `${prefix}lease`,
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
    CREATE TABLE IF NOT EXISTS ${t.fence} (
      fence_key TEXT NOT NULL PRIMARY KEY,
      token INTEGER NOT NULL
    );
    CREATE TABLE IF NOT EXISTS ${t.lease} (
      name TEXT NOT NULL PRIMARY KEY,
      owner TEXT NOT NULL,
      expires_at_ms INTEGER NOT NULL,
      token INTEGER NOT NULL
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
