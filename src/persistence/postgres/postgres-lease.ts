/**
 * Leases in PostgreSQL: one row per lease name holding the owner and an expiry computed
 * by the database's clock (`now()`), so owners on different machines never compare their
 * own clocks. Acquire is one atomic upsert that succeeds only when the row is free,
 * expired, or already ours; the holder renews every heartbeatIntervalMs. Locally an
 * owner believes it holds the lease until (time it sent the last successful renewal +
 * ttlMs), which is never later than the database's expiry.
 *
 * Table: `<prefix>lease (name text primary key, owner text not null, expires_at
 * timestamptz not null)`, created on first use.
 */
import type pg from "pg";
import type { Disposable } from "../../base/disposable.js";
import { ConfigError } from "../../base/errors.js";
import type { Clock } from "../../ports/clock.js";
import { type Lease, LeaseLostError } from "../../ports/lease.js";
import type { Scheduler } from "../../ports/scheduler.js";
import {
  defaultLeaseTimings,
  type LeaseTimings,
  validateLeaseTimings,
} from "../memory/memory-lease.js";

const PREFIX_RE = /^[a-z_][a-z0-9_]{0,40}$/;

export interface PostgresLeaseStoreOptions {
  readonly pool: pg.Pool;
  /** Table name prefix (lower-case letters, digits, '_'). Default "shardkit_". */
  readonly tablePrefix?: string;
  readonly clock: Clock;
  readonly scheduler: Scheduler;
}

export class PostgresLeaseStore {
  readonly table: string;
  private schema: Promise<void> | undefined;

  constructor(private readonly options: PostgresLeaseStoreOptions) {
    const prefix = options.tablePrefix ?? "shardkit_";
    if (!PREFIX_RE.test(prefix))
      throw new ConfigError(
        "postgres.tablePrefix",
        prefix,
        "lower-case letters, digits and '_', starting with a letter or '_'",
      );
    this.table = `${prefix}lease`;
  }

  /** Creates the table if needed (idempotent; also done on first use). */
  ensureSchema(): Promise<void> {
    this.schema ??= this.options.pool
      .query(
        `CREATE TABLE IF NOT EXISTS ${this.table} (name text PRIMARY KEY, owner text NOT NULL, expires_at timestamptz NOT NULL)`,
      )
      .then(() => undefined);
    return this.schema;
  }

  lease(name: string, owner: string, timings: LeaseTimings = defaultLeaseTimings): PostgresLease {
    return new PostgresLease(this, this.options, name, owner, validateLeaseTimings(timings));
  }

  /** @internal One atomic acquire-or-renew; true when `owner` holds the lease after it. */
  async tryAcquire(name: string, owner: string, ttlMs: number): Promise<boolean> {
    await this.ensureSchema();
    const r = await this.options.pool.query(
      `INSERT INTO ${this.table} AS l (name, owner, expires_at)
         VALUES ($1, $2, now() + make_interval(secs => $3::double precision / 1000))
       ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
         WHERE l.owner = EXCLUDED.owner OR l.expires_at < now()
       RETURNING owner`,
      [name, owner, ttlMs],
    );
    return r.rowCount === 1;
  }

  /** @internal */
  async release(name: string, owner: string): Promise<boolean> {
    await this.ensureSchema();
    const r = await this.options.pool.query(
      `DELETE FROM ${this.table} WHERE name = $1 AND owner = $2`,
      [name, owner],
    );
    return r.rowCount === 1;
  }

  /** The current holder according to the database (for operations and tests). */
  async holderOf(name: string): Promise<string | undefined> {
    await this.ensureSchema();
    const r = await this.options.pool.query<{ owner: string }>(
      `SELECT owner FROM ${this.table} WHERE name = $1 AND expires_at >= now()`,
      [name],
    );
    return r.rows[0]?.owner;
  }
}

export class PostgresLease implements Lease {
  private heldUntil = Number.NEGATIVE_INFINITY;
  private renewal: Disposable | null = null;
  private onLost: ((reason: unknown) => void) | undefined;
  private released = false;

  constructor(
    private readonly store: PostgresLeaseStore,
    private readonly ports: { readonly clock: Clock; readonly scheduler: Scheduler },
    readonly name: string,
    readonly owner: string,
    private readonly timings: LeaseTimings,
  ) {}

  async acquire(onLost?: (reason: unknown) => void): Promise<boolean> {
    this.onLost = onLost;
    this.released = false;
    const sentAt = this.ports.clock.now();
    const ok = await this.store.tryAcquire(this.name, this.owner, this.timings.ttlMs);
    if (!ok) return false;
    this.heldUntil = sentAt + this.timings.ttlMs;
    this.scheduleRenewal();
    return true;
  }

  async release(): Promise<boolean> {
    this.released = true;
    this.renewal?.dispose();
    this.renewal = null;
    this.heldUntil = Number.NEGATIVE_INFINITY;
    return this.store.release(this.name, this.owner);
  }

  checkLease(): boolean {
    return this.ports.clock.now() < this.heldUntil;
  }

  private scheduleRenewal(): void {
    this.renewal?.dispose();
    this.renewal = this.ports.scheduler.schedule(this.timings.heartbeatIntervalMs, () => {
      this.renewal = null;
      void this.renew();
    });
  }

  private async renew(): Promise<void> {
    if (this.released) return;
    const sentAt = this.ports.clock.now();
    try {
      if (await this.store.tryAcquire(this.name, this.owner, this.timings.ttlMs)) {
        if (this.released) return;
        this.heldUntil = sentAt + this.timings.ttlMs;
        this.scheduleRenewal();
      } else this.lost(new LeaseLostError(this.name, this.owner));
    } catch (error) {
      if (this.checkLease()) this.scheduleRenewal();
      else this.lost(error);
    }
  }

  private lost(reason: unknown): void {
    this.heldUntil = Number.NEGATIVE_INFINITY;
    if (!this.released) this.onLost?.(reason);
  }
}
