/**
 * `postgresPersistence({ pool })`: a Journal and a SnapshotStore on one node-postgres
 * pool (the caller's: it creates and ends it; an "error" listener is added so that a
 * database restart does not end the process, pool-errors.ts). Tables are created on first use unless
 * `createSchema: false`; `migratePostgres(pool, prefix)` creates them ahead of time.
 */
import type pg from "pg";
import type { JournalSettings, SnapshotSettings } from "../persistence-settings.js";
import { survivePoolErrors } from "./pool-errors.js";
import { PostgresJournal } from "./postgres-journal.js";
import { type PostgresSettings, resolvePostgresSettings } from "./postgres-settings.js";
import { PostgresSnapshotStore } from "./postgres-snapshot-store.js";

export interface PostgresPersistenceOptions extends Partial<PostgresSettings> {
  readonly pool: pg.Pool;
  readonly journal?: Partial<JournalSettings>;
  readonly snapshot?: Partial<SnapshotSettings>;
}

export interface PostgresPersistence {
  readonly journal: PostgresJournal;
  readonly snapshots: PostgresSnapshotStore;
  readonly settings: PostgresSettings;
  /** Drains pending appends. Does not end the pool. */
  close(): Promise<void>;
}

/**
 * Creates the PostgreSQL journal and snapshot store.
 * @throws ConfigError on an invalid setting.
 */
export function postgresPersistence(options: PostgresPersistenceOptions): PostgresPersistence {
  const { pool, journal, snapshot, ...rest } = options;
  const settings = resolvePostgresSettings(rest);
  survivePoolErrors(pool);
  const j = new PostgresJournal({ pool, journal, ...settings });
  const s = new PostgresSnapshotStore({ pool, snapshot, ...settings });
  return { journal: j, snapshots: s, settings, close: () => j.close() };
}
