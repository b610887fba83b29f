/**
 * The durable store of Distributed Data on SQLite: one table of (key, serializer id,
 * bytes) in its own file (WAL, synchronous writes). A file that is not a readable database
 * fails at open with a DurableStoreError naming the file.
 */
import type Database from "better-sqlite3";
import { ConfigError } from "../../base/errors.js";
import {
  type DDataDurableStore,
  type DurableEntry,
  DurableStoreError,
} from "../../ports/ddata-durable-store.js";
import { openSqliteDatabase } from "./sqlite-driver.js";

export interface SqliteDDataStoreOptions {
  /** The file (created if missing). */
  readonly path: string;
}

export class SqliteDDataStore implements DDataDurableStore {
  readonly location: string;
  private readonly db: Database.Database;
  private readonly put: Database.Statement<[string, number, Uint8Array]>;

  /** @throws DurableStoreError when the file cannot be opened as a database. */
  constructor(options: SqliteDDataStoreOptions) {
    const { path } = options;
    if (typeof path !== "string" || path.length === 0)
      throw new ConfigError("ddata.durable.path", path, "a file path");
    this.location = path;
    let db: Database.Database | undefined;
    try {
      db = openSqliteDatabase(path, {});
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = NORMAL");
      db.exec(
        "CREATE TABLE IF NOT EXISTS ddata_durable (key TEXT PRIMARY KEY, serializer_id INTEGER NOT NULL, bytes BLOB NOT NULL)",
      );
      this.put = db.prepare(
        "INSERT INTO ddata_durable (key, serializer_id, bytes) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET serializer_id = excluded.serializer_id, bytes = excluded.bytes",
      );
    } catch (e) {
      db?.close();
      throw new DurableStoreError(path, `cannot open: ${(e as Error).message}`);
    }
    this.db = db;
  }

  loadAll(): Map<string, DurableEntry> {
    const out = new Map<string, DurableEntry>();
    try {
      const rows = this.db.prepare("SELECT key, serializer_id, bytes FROM ddata_durable").all() as {
        key: unknown;
        serializer_id: unknown;
        bytes: unknown;
      }[];
      for (const r of rows) {
        if (
          typeof r.key !== "string" ||
          typeof r.serializer_id !== "number" ||
          !(r.bytes instanceof Uint8Array)
        )
          throw new DurableStoreError(
            this.location,
            "a row has an unexpected shape",
            String(r.key),
          );
        out.set(r.key, { serializerId: r.serializer_id, bytes: r.bytes });
      }
    } catch (e) {
      if (e instanceof DurableStoreError) throw e;
      throw new DurableStoreError(this.location, `cannot read: ${(e as Error).message}`);
    }
    return out;
  }

  store(key: string, entry: DurableEntry): void {
    try {
      this.put.run(key, entry.serializerId, entry.bytes);
    } catch (e) {
      throw new DurableStoreError(this.location, `cannot write: ${(e as Error).message}`, key);
    }
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
