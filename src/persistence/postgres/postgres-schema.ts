/**
 * The PostgreSQL schema of the journal and snapshot store. `migratePostgres` creates it
 * idempotently; the plugins call it on first use (unless `createSchema: false`, for
 * deployments that run `shardkit migrate` with a privileged role instead).
 *
 * - `<p>journal`: one row per event; primary key (persistence_id, sequence_nr) is the
 *   uniqueness behind optimistic concurrency. `serializer_id` is bigint because
 *   serializer ids go up to 2^32-1. Tags are text[] (NULL for none).
 * - `<p>journal_deleted`: per id, the highest sequence number removed by deleteTo, so
 *   the highest sequence number survives deleting every event.
 * - `<p>snapshot`: one row per (persistence_id, sequence_nr).
 * - `<p>fence`: per fence key (a shard, `<type>/<shardId>`), the newest fencing token a
 *   write carried; a fenced append locks and checks its row in the append's transaction.
 * - `<p>lease` (created by PostgresLeaseStore, see `leaseDdl`): leases with their
 *   fencing token. Databases from before fencing gain the `token` column (ADD COLUMN IF
 *   NOT EXISTS, default 0) and the fence table on the next migration.
 *
 * Concurrent migrations (several nodes starting at once) serialize on a transaction-
 * scoped advisory lock, because concurrent CREATE TABLE IF NOT EXISTS can still fail.
 */
import type pg from "pg";
import { DEFAULT_TABLE_PREFIX, validateTablePrefix } from "../persistence-settings.js";

/** The table names for one prefix. */
export interface PostgresTables {
  readonly journal: string;
  readonly deleted: string;
  readonly snapshot: string;
  readonly fence: string;
}

export function postgresTables(prefix: string): PostgresTables {
  return {
    journal: `${prefix}journal`,
    deleted: `${prefix}journal_deleted`,
    snapshot: `${prefix}snapshot`,
    fence: `${prefix}fence`,
  };
}

function ddl(t: PostgresTables): string {
  return `
    CREATE TABLE IF NOT EXISTS ${t.journal} (
      persistence_id text NOT NULL,
      sequence_nr bigint NOT NULL,
      serializer_id bigint NOT NULL,
      payload bytea NOT NULL,
      tags text[],
      timestamp_ms bigint NOT NULL,
      PRIMARY KEY (persistence_id, sequence_nr)
    );
    CREATE TABLE IF NOT EXISTS ${t.deleted} (
      persistence_id text PRIMARY KEY,
      deleted_to bigint NOT NULL
    );
    CREATE TABLE IF NOT EXISTS ${t.snapshot} (
      persistence_id text NOT NULL,
      sequence_nr bigint NOT NULL,
      timestamp_ms bigint NOT NULL,
      serializer_id bigint NOT NULL,
      payload bytea NOT NULL,
      PRIMARY KEY (persistence_id, sequence_nr)
    );
    CREATE TABLE IF NOT EXISTS ${t.fence} (
      fence_key text PRIMARY KEY,
      token bigint NOT NULL
    );`;
}

/**
 * The lease table (one row per lease name; `token` is the fencing token of the current or
 * last holder, never reset: a released lease keeps its row with an expiry in the past).
 * Idempotent, and upgrades a table from before fencing tokens.
 */
export function leaseDdl(table: string): string {
  return `
    CREATE TABLE IF NOT EXISTS ${table} (name text PRIMARY KEY, owner text NOT NULL, expires_at timestamptz NOT NULL, token bigint NOT NULL DEFAULT 0);
    ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS token bigint NOT NULL DEFAULT 0;`;
}

/**
 * Creates the journal and snapshot tables for `tablePrefix` if they do not exist.
 * @throws ConfigError on an invalid prefix; the driver's error when the DDL fails.
 */
export async function migratePostgres(
  pool: pg.Pool,
  tablePrefix: string = DEFAULT_TABLE_PREFIX,
): Promise<PostgresTables> {
  const prefix = validateTablePrefix(tablePrefix, "postgres.tablePrefix");
  const tables = postgresTables(prefix);
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [
      `shardkit-migrate:${prefix}`,
    ]);
    await client.query(ddl(tables));
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
  return tables;
}

/** A plain Uint8Array view of a driver Buffer (no copy), so every plugin returns one type. */
export function asBytes(buf: Uint8Array): Uint8Array {
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}
