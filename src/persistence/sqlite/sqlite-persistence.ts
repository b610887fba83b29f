/**
 * `sqlitePersistence({ path })`: the embedded default. Opens (or creates) one SQLite
 * file in WAL mode, creates the tables, and returns a Journal and a SnapshotStore that
 * share the connection, and for a file starts the background checkpointer
 * (sqlite-checkpointer.ts). `close()` drains the journal's pending appends, stops the
 * checkpointer, then closes the file.
 */
import type Database from "better-sqlite3";
import { ConfigError } from "../../base/errors.js";
import type { JournalSettings, SnapshotSettings } from "../persistence-settings.js";
import {
  type SqliteCheckpointer,
  type SqliteCheckpointStats,
  startSqliteCheckpointer,
} from "./sqlite-checkpointer.js";
import { openSqliteDatabase } from "./sqlite-driver.js";
import { SqliteJournal } from "./sqlite-journal.js";
import { SqliteLeaseStore } from "./sqlite-lease.js";
import { migrateSqlite } from "./sqlite-schema.js";
import { resolveSqliteSettings, type SqliteSettings } from "./sqlite-settings.js";
import { SqliteSnapshotStore } from "./sqlite-snapshot-store.js";

export interface SqlitePersistenceOptions extends Partial<SqliteSettings> {
  /** The database file (created if missing), or ":memory:". */
  readonly path: string;
  readonly journal?: Partial<JournalSettings>;
  readonly snapshot?: Partial<SnapshotSettings>;
}

export interface SqlitePersistence {
  readonly journal: SqliteJournal;
  readonly snapshots: SqliteSnapshotStore;
  /** Fenced leases in the same file (for shard leases: `lease: { provider: leases }`). */
  readonly leases: SqliteLeaseStore;
  readonly settings: SqliteSettings;
  /** The underlying connection (for operations and tests). */
  readonly db: Database.Database;
  /** Counters of the background checkpointer; undefined when there is none. */
  checkpointStats(): SqliteCheckpointStats | undefined;
  /** Drains pending appends, then closes the database. Idempotent. */
  close(): Promise<void>;
}

/**
 * Opens the SQLite journal and snapshot store.
 * @throws ConfigError on an invalid setting; the driver's error when the file cannot be opened.
 */
export function sqlitePersistence(options: SqlitePersistenceOptions): SqlitePersistence {
  const { path, journal, snapshot, ...rest } = options;
  if (typeof path !== "string" || path.length === 0)
    throw new ConfigError("sqlite.path", path, 'a file path or ":memory:"');
  const settings = resolveSqliteSettings(rest);
  const db = openSqliteDatabase(path, { timeout: settings.busyTimeoutMs });
  try {
    db.pragma("journal_mode = WAL");
    db.pragma(`synchronous = ${settings.synchronous.toUpperCase()}`);
    db.pragma(`wal_autocheckpoint = ${settings.walAutocheckpointPages}`);
    const tables = migrateSqlite(db, settings.tablePrefix);
    // From here on a statement blocks for the lock only briefly; the stores retry on a
    // timer (sqlite-busy.ts).
    db.pragma(`busy_timeout = ${settings.busyBlockMs}`);
    const j = new SqliteJournal(db, tables, {
      journal,
      busy: settings,
      appendBusyBlockMs: settings.appendBusyBlockMs,
    });
    const s = new SqliteSnapshotStore(db, tables, { snapshot, busy: settings });
    const checkpointer: SqliteCheckpointer | undefined =
      path === ":memory:" || settings.walCheckpointIntervalMs === 0
        ? undefined
        : startSqliteCheckpointer(path, settings.walCheckpointIntervalMs, settings.synchronous);
    let closing: Promise<void> | undefined;
    return {
      journal: j,
      snapshots: s,
      leases: new SqliteLeaseStore(db, tables, { busy: settings }),
      settings,
      db,
      checkpointStats: () => checkpointer?.stats(),
      close: () => {
        closing ??= j
          .close()
          .then(() => checkpointer?.stop())
          .then(() => {
            db.close();
          });
        return closing;
      },
    };
  } catch (error) {
    db.close();
    throw error;
  }
}
