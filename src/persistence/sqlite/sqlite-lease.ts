/**
 * Fenced leases in SQLite (the embedded default's lease store, for shard leases): one row
 * per lease name in `<prefix>lease` with the owner, the expiry and the fencing token.
 * Acquire-or-renew is one `BEGIN IMMEDIATE` transaction (the database's write lock), so
 * it is atomic across every connection and process that opens the file.
 *
 * Time: the expiry is computed from this process's wall clock (`Date.now()`) when the
 * transaction runs. Every process sharing one SQLite file runs on the same machine, so
 * they read the same clock; the shard's own deadline (core/shard/shard-lease-machine.ts)
 * counts from the send time of the request on its monotonic clock, which is never later.
 *
 * Cost: a renewal (the holder's live row, token kept) commits with `synchronous = NORMAL`
 * (no fsync; a process crash keeps it, only a power loss may undo it, which merely
 * shortens the holding), so renewals do not stall the event loop on an fsync each; a
 * new acquisition, which increments the token, commits at the connection's own level.
 *
 * Lock waits: an acquisition that finds another connection's write lock taken is retried
 * on a timer (sqlite-busy.ts) rather than blocking the event loop; it fails with
 * LeaseUnavailableError after busyTimeoutMs. The expiry is computed when the transaction
 * finally runs, so a late renewal only makes the store's expiry later than the shard's own
 * deadline, never earlier.
 *
 * Tokens: a new acquisition (no row, an expired or released row, another owner's expired
 * row) sets token = previous token + 1; a renewal by the holder keeps it. A release only
 * expires the row (the token stays, so tokens never repeat).
 */
import type Database from "better-sqlite3";
import { type LeaseStore, LeaseUnavailableError } from "../../ports/lease.js";
import { type BusyWait, untilUnlocked } from "./sqlite-busy.js";
import type { SqliteTables } from "./sqlite-schema.js";
import { defaultSqliteSettings } from "./sqlite-settings.js";

export interface SqliteLeaseStoreOptions {
  /** How to wait for another connection's write lock (default: the SQLite defaults). */
  readonly busy?: BusyWait;
  /** The wall clock in ms (default Date.now; tests may pass their own). */
  readonly now?: () => number;
}

interface LeaseRow {
  owner: string;
  expires_at_ms: number;
  token: number;
}

/** A LeaseStore on an SQLite database that has the schema (`migrateSqlite`). */
export class SqliteLeaseStore implements LeaseStore {
  private readonly acquireTx: (name: string, owner: string, ttlMs: number) => number | undefined;
  private readonly releaseTx: (name: string, owner: string) => boolean;
  private readonly getRow: Database.Statement<[string], LeaseRow>;
  private readonly db: Database.Database;
  /** The connection's synchronous level (restored after a renewal). */
  private readonly synchronous: number;
  private readonly busy: BusyWait;
  private readonly now: () => number;

  constructor(db: Database.Database, tables: SqliteTables, options: SqliteLeaseStoreOptions = {}) {
    this.db = db;
    this.busy = options.busy ?? defaultSqliteSettings;
    this.now = options.now ?? Date.now;
    this.synchronous = Number(db.pragma("synchronous", { simple: true }));
    const t = tables.lease;
    this.getRow = db.prepare<[string], LeaseRow>(
      `SELECT owner, expires_at_ms, token FROM ${t} WHERE name = ?`,
    );
    const upsert = db.prepare(
      `INSERT INTO ${t} (name, owner, expires_at_ms, token) VALUES (?, ?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET owner = excluded.owner,
         expires_at_ms = excluded.expires_at_ms, token = excluded.token`,
    );
    const expire = db.prepare(
      `UPDATE ${t} SET expires_at_ms = ? WHERE name = ? AND owner = ? AND expires_at_ms > ?`,
    );
    this.acquireTx = db.transaction((name: string, owner: string, ttlMs: number) => {
      const now = this.now();
      const row = this.getRow.get(name);
      const live = row !== undefined && row.expires_at_ms > now;
      if (live && row.owner !== owner) return undefined;
      const token = live ? row.token : (row?.token ?? 0) + 1;
      upsert.run(name, owner, now + ttlMs, token);
      return token;
    }).immediate;
    this.releaseTx = db.transaction((name: string, owner: string) => {
      const now = this.now();
      return expire.run(now, name, owner, now).changes === 1;
    }).immediate;
  }

  async acquireLease(name: string, owner: string, ttlMs: number): Promise<number | undefined> {
    try {
      return await untilUnlocked(() => this.acquireNow(name, owner, ttlMs), this.busy);
    } catch (error) {
      throw new LeaseUnavailableError(name, owner, String(error));
    }
  }

  /** One attempt; the synchronous level is switched and restored within it. */
  private acquireNow(name: string, owner: string, ttlMs: number): number | undefined {
    const row = this.getRow.get(name);
    const renewal = row !== undefined && row.owner === owner && row.expires_at_ms > this.now();
    if (!renewal) return this.acquireTx(name, owner, ttlMs);
    this.db.pragma("synchronous = NORMAL");
    try {
      return this.acquireTx(name, owner, ttlMs);
    } finally {
      this.db.pragma(`synchronous = ${this.synchronous}`);
    }
  }

  async releaseLease(name: string, owner: string): Promise<boolean> {
    try {
      return await untilUnlocked(() => this.releaseTx(name, owner), this.busy);
    } catch (error) {
      throw new LeaseUnavailableError(name, owner, String(error));
    }
  }

  /** The current holder and token according to the database (operations and tests). */
  holderOf(name: string): { readonly owner: string; readonly token: number } | undefined {
    const row = this.getRow.get(name);
    return row !== undefined && row.expires_at_ms > this.now()
      ? { owner: row.owner, token: row.token }
      : undefined;
  }

  /** The newest token of `name` (undefined: never acquired). */
  newestToken(name: string): number | undefined {
    return this.getRow.get(name)?.token;
  }
}
