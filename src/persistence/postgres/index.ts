/** `shardkit/postgres`: Journal, SnapshotStore and Lease on PostgreSQL (node-postgres). */
export { PostgresJournal, type PostgresJournalOptions } from "./postgres-journal.js";
export {
  PostgresLease,
  PostgresLeaseStore,
  type PostgresLeaseStoreOptions,
} from "./postgres-lease.js";
export {
  type PostgresPersistence,
  type PostgresPersistenceOptions,
  postgresPersistence,
} from "./postgres-persistence.js";
export { migratePostgres, type PostgresTables, postgresTables } from "./postgres-schema.js";
export { defaultPostgresSettings, type PostgresSettings } from "./postgres-settings.js";
export {
  PostgresSnapshotStore,
  type PostgresSnapshotStoreOptions,
} from "./postgres-snapshot-store.js";
