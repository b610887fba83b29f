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
 * Cost: requests made during one event-loop turn share one transaction (a member's
 * shards renew in step, so their renewals batch). A batch of renewals only (the holders'
 * live rows, tokens kept) commits with `synchronous = NORMAL` (no fsync; a process crash
 * keeps it, only a power loss may undo it, which merely shortens the holdings), so
 * renewals do not stall the event loop on fsyncs; a batch with a new acquisition, which
 * increments a token, commits at the connection's own level.
 *
 * Tokens: a new acquisition (no row, an expired or released row, another owner's expired
 * row) sets token = previous token + 1; a renewal by the holder keeps it. A release only
 * expires the row (the token stays, so tokens never repeat).
 */
import type Database from "better-sqlite3";
import { type LeaseStore, LeaseUnavailableError } from "../../ports/lease.js";
import type { SqliteTables } from "./sqlite-schema.js";

interface Request {
  readonly name: string;
  readonly owner: string;
  readonly ttlMs: number;
  resolve(token: number | undefined): void;
  reject(error: unknown): void;
}

interface LeaseRow {
  owner: string;
  expires_at_ms: number;
  token: number;
}

/** A LeaseStore on an SQLite database that has the schema (`migrateSqlite`). */
export class SqliteLeaseStore implements LeaseStore {
  private readonly acquireTx: (batch: readonly Request[]) => (number | undefined)[];
  private pending: Request[] = [];
  private flushScheduled = false;
  private readonly releaseTx: (name: string, owner: string) => boolean;
  private readonly getRow: Database.Statement<[string], LeaseRow>;
  private readonly db: Database.Database;
  /** The connection's synchronous level (restored after a renewal). */
  private readonly synchronous: number;

  /** `now` is the wall clock in ms (default Date.now; tests may pass their own). */
  constructor(
    db: Database.Database,
    tables: SqliteTables,
    private readonly now: () => number = Date.now,
  ) {
    this.db = db;
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
    this.acquireTx = db.transaction((batch: readonly Request[]) => {
      const now = this.now();
      return batch.map(({ name, owner, ttlMs }) => {
        const row = this.getRow.get(name);
        const live = row !== undefined && row.expires_at_ms > now;
        if (live && row.owner !== owner) return undefined;
        const token = live ? row.token : (row?.token ?? 0) + 1;
        upsert.run(name, owner, now + ttlMs, token);
        return token;
      });
    }).immediate;
    this.releaseTx = db.transaction((name: string, owner: string) => {
      const now = this.now();
      return expire.run(now, name, owner, now).changes === 1;
    }).immediate;
  }

  acquireLease(name: string, owner: string, ttlMs: number): Promise<number | undefined> {
    return new Promise((resolve, reject) => {
      this.pending.push({ name, owner, ttlMs, resolve, reject });
      if (this.flushScheduled) return;
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    });
  }

  /** Runs the requests of one event-loop turn in one transaction (see the module comment). */
  private flush(): void {
    const batch = this.pending;
    this.pending = [];
    this.flushScheduled = false;
    let renewalsOnly = false;
    try {
      const now = this.now();
      renewalsOnly = batch.every(({ name, owner }) => {
        const row = this.getRow.get(name);
        return row !== undefined && row.owner === owner && row.expires_at_ms > now;
      });
      if (renewalsOnly) this.db.pragma("synchronous = NORMAL");
      const tokens = this.acquireTx(batch);
      batch.forEach((r, i) => r.resolve(tokens[i]));
    } catch (error) {
      for (const r of batch) r.reject(new LeaseUnavailableError(r.name, r.owner, String(error)));
    } finally {
      if (renewalsOnly) this.db.pragma(`synchronous = ${this.synchronous}`);
    }
  }

  async releaseLease(name: string, owner: string): Promise<boolean> {
    try {
      return this.releaseTx(name, owner);
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
