/**
 * Leases in PostgreSQL: one row per lease name holding the owner and an expiry computed
 * by the database's clock (`now()`), so owners on different machines never compare their
 * own clocks. Acquire is one atomic upsert that succeeds only when the row is free,
 * expired, or already ours; the holder renews every heartbeatIntervalMs. Locally an
 * owner believes it holds the lease until (time it sent the last successful renewal +
 * ttlMs), which is never later than the database's expiry.
 *
 * Table: `<prefix>lease (name text primary key, owner text not null, expires_at
 * timestamptz not null, token bigint not null)`, created (or upgraded) on first use
 * (`leaseDdl` in postgres-schema.ts). `token` is the fencing token: a new acquisition
 * increments it, a renewal keeps it, a release only expires the row, so tokens of one
 * name never repeat. The store is also a fenced LeaseStore for shard leases.
 */

import type pg from "pg";
import type { Disposable } from "../../base/disposable.js";
import { ConfigError } from "../../base/errors.js";
import type { Clock } from "../../ports/clock.js";
import { type Lease, LeaseLostError, type LeaseStore } from "../../ports/lease.js";
import type { Scheduler } from "../../ports/scheduler.js";
import {
  defaultLeaseTimings,
  type LeaseTimings,
  validateLeaseTimings,
} from "../memory/memory-lease.js";
import { survivePoolErrors } from "./pool-errors.js";
import { leaseDdl } from "./postgres-schema.js";

const PREFIX_RE = /^[a-z_][a-z0-9_]{0,40}$/;

export interface PostgresLeaseStoreOptions {
  readonly pool: pg.Pool;
  /** Table name prefix (lower-case letters, digits, '_'). Default "shardkit_". */
  readonly tablePrefix?: string;
  readonly clock: Clock;
  readonly scheduler: Scheduler;
}

export class PostgresLeaseStore implements LeaseStore {
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
    survivePoolErrors(options.pool);
  }

  /** Creates the table if needed (idempotent; also done on first use). */
  ensureSchema(): Promise<void> {
    this.schema ??= this.options.pool.query(leaseDdl(this.table)).then(
      () => undefined,
      (error: unknown) => {
        this.schema = undefined;
        throw error;
      },
    );
    return this.schema;
  }

  lease(name: string, owner: string, timings: LeaseTimings = defaultLeaseTimings): PostgresLease {
    return new PostgresLease(this, this.options, name, owner, validateLeaseTimings(timings));
  }

  /** @internal One atomic acquire-or-renew; true when `owner` holds the lease after it. */
  async tryAcquire(name: string, owner: string, ttlMs: number): Promise<boolean> {
    return (await this.acquireLease(name, owner, ttlMs)) !== undefined;
  }

  /**
   * One atomic acquire-or-renew: the fencing token when `owner` holds the lease after
   * it, undefined when another owner does.
   */
  async acquireLease(name: string, owner: string, ttlMs: number): Promise<number | undefined> {
    await this.ensureSchema();
    const r = await this.options.pool.query<{ token: string }>(
      `INSERT INTO ${this.table} AS l (name, owner, expires_at, token)
         VALUES ($1, $2, now() + make_interval(secs => $3::double precision / 1000), 1)
       ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at,
         token = CASE WHEN l.owner = EXCLUDED.owner AND l.expires_at >= now() THEN l.token
                      ELSE l.token + 1 END
         WHERE l.owner = EXCLUDED.owner OR l.expires_at < now()
       RETURNING token`,
      [name, owner, ttlMs],
    );
    const t = r.rows[0]?.token;
    return t === undefined ? undefined : Number(t);
  }

  /** @internal */
  async release(name: string, owner: string): Promise<boolean> {
    return this.releaseLease(name, owner);
  }

  /** Gives the lease up: expires the row (the token stays, so tokens never repeat). */
  async releaseLease(name: string, owner: string): Promise<boolean> {
    await this.ensureSchema();
    const r = await this.options.pool.query(
      `UPDATE ${this.table} SET expires_at = '-infinity' WHERE name = $1 AND owner = $2 AND expires_at >= now()`,
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
  private token: number | undefined;
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
    const token = await this.store.acquireLease(this.name, this.owner, this.timings.ttlMs);
    if (token === undefined) return false;
    this.token = token;
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

  fencingToken(): number | undefined {
    return this.checkLease() ? this.token : undefined;
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
      const token = await this.store.acquireLease(this.name, this.owner, this.timings.ttlMs);
      if (token !== undefined) {
        if (this.released) return;
        this.token = token;
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
