/**
 * Operations on a SQLite store outside the Journal port: deleting every row of a set of
 * persistenceIds (exact ids and id prefixes), in one transaction. Used by
 * `shardkit remove-sharding-data`.
 */
import type Database from "better-sqlite3";
import type { PersistenceIdMatch, RemovedRows } from "../persistence-admin.js";
import type { SqliteTables } from "./sqlite-schema.js";

/** Deletes the events, deletion marks and snapshots of the matching persistenceIds. */
export function deletePersistenceIdsSqlite(
  db: Database.Database,
  tables: SqliteTables,
  match: PersistenceIdMatch,
): RemovedRows {
  return db.transaction((): RemovedRows => {
    const ids = new Set<string>(match.exact);
    for (const table of [tables.journal, tables.snapshot, tables.deleted]) {
      const q = db.prepare(
        `SELECT DISTINCT persistence_id AS id FROM ${table} WHERE substr(persistence_id, 1, length(?)) = ?`,
      );
      for (const p of match.prefixes)
        for (const row of q.all(p, p) as { id: string }[]) ids.add(row.id);
    }
    const delJournal = db.prepare(`DELETE FROM ${tables.journal} WHERE persistence_id = ?`);
    const delSnap = db.prepare(`DELETE FROM ${tables.snapshot} WHERE persistence_id = ?`);
    const delMark = db.prepare(`DELETE FROM ${tables.deleted} WHERE persistence_id = ?`);
    let events = 0;
    let snapshots = 0;
    let persistenceIds = 0;
    for (const id of ids) {
      const e = delJournal.run(id).changes;
      const s = delSnap.run(id).changes;
      const d = delMark.run(id).changes;
      events += e;
      snapshots += s;
      if (e + s + d > 0) persistenceIds++;
    }
    return { persistenceIds, events, snapshots };
  })();
}
