/**
 * Operations on a PostgreSQL store outside the Journal port: deleting every row of a set
 * of persistenceIds (exact ids and id prefixes), in one transaction. Used by
 * `shardkit remove-sharding-data`.
 */
import type pg from "pg";
import type { PersistenceIdMatch, RemovedRows } from "../persistence-admin.js";
import type { PostgresTables } from "./postgres-schema.js";

/** Deletes the events, deletion marks and snapshots of the matching persistenceIds. */
export async function deletePersistenceIdsPostgres(
  pool: pg.Pool,
  tables: PostgresTables,
  match: PersistenceIdMatch,
): Promise<RemovedRows> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const where = "persistence_id = ANY($1::text[]) OR left(persistence_id, length(p)) = p";
    const from = (table: string) =>
      `FROM ${table}, unnest($2::text[] || ARRAY[NULL]::text[]) AS p WHERE ${where}`;
    const args = [match.exact, match.prefixes];
    const ids = await client.query<{ id: string }>(
      `SELECT persistence_id AS id ${from(tables.journal)}
       UNION SELECT persistence_id ${from(tables.snapshot)}
       UNION SELECT persistence_id ${from(tables.deleted)}`,
      args,
    );
    const list = ids.rows.map((r) => r.id);
    const del = (table: string) =>
      client.query(`DELETE FROM ${table} WHERE persistence_id = ANY($1::text[])`, [list]);
    const events = (await del(tables.journal)).rowCount ?? 0;
    const snapshots = (await del(tables.snapshot)).rowCount ?? 0;
    await del(tables.deleted);
    await client.query("COMMIT");
    return { persistenceIds: list.length, events, snapshots };
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
