/** `shardkit/sqlite`: the embedded Journal and SnapshotStore (better-sqlite3, WAL, one file). */

export { SqliteDDataStore, type SqliteDDataStoreOptions } from "./sqlite-ddata-store.js";
export { SqliteJournal, type SqliteJournalOptions } from "./sqlite-journal.js";
export { SqliteLeaseStore } from "./sqlite-lease.js";
export {
  type SqlitePersistence,
  type SqlitePersistenceOptions,
  sqlitePersistence,
} from "./sqlite-persistence.js";
export { migrateSqlite, type SqliteTables, sqliteTables } from "./sqlite-schema.js";
export { defaultSqliteSettings, type SqliteSettings } from "./sqlite-settings.js";
export { SqliteSnapshotStore, type SqliteSnapshotStoreOptions } from "./sqlite-snapshot-store.js";
