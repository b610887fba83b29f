/**
 * In-memory leases for tests and the simulator: one `MemoryLeaseStore` stands for the
 * shared database; each `MemoryLease` renews itself every `heartbeatIntervalMs` while
 * held and expires `ttlMs` after the last renewal (clock and timers are ports, so the
 * simulator can partition a node away from the store with `store.blackhole(owner)`).
 */
import type { Disposable } from "../../base/disposable.js";
import { ConfigError } from "../../base/errors.js";
import type { Clock } from "../../ports/clock.js";
import {
  type Lease,
  LeaseLostError,
  type LeaseStore,
  LeaseUnavailableError,
} from "../../ports/lease.js";
import type { Scheduler } from "../../ports/scheduler.js";

interface Holder {
  owner: string;
  expiresAt: number;
  token: number;
}

export interface LeaseTimings {
  /** A lease not renewed for this long is free again. */
  readonly ttlMs: number;
  /** A holder renews this often (must be well below ttlMs). */
  readonly heartbeatIntervalMs: number;
}

export const defaultLeaseTimings: LeaseTimings = Object.freeze({
  ttlMs: 120_000,
  heartbeatIntervalMs: 12_000,
});

export function validateLeaseTimings(t: LeaseTimings, prefix = "lease."): LeaseTimings {
  if (!(t.ttlMs > 0) || !Number.isFinite(t.ttlMs))
    throw new ConfigError(`${prefix}ttlMs`, t.ttlMs, "a duration in ms > 0");
  if (!(t.heartbeatIntervalMs > 0) || t.heartbeatIntervalMs >= t.ttlMs)
    throw new ConfigError(
      `${prefix}heartbeatIntervalMs`,
      t.heartbeatIntervalMs,
      `a duration in ms in (0, ttlMs=${t.ttlMs})`,
    );
  return t;
}

/** The shared store all leases of a test talk to (also a fenced LeaseStore for shard leases). */
export class MemoryLeaseStore implements LeaseStore {
  private readonly holders = new Map<string, Holder>();
  /** Newest token per name (kept after release and expiry: tokens never repeat). */
  private readonly tokens = new Map<string, number>();
  private readonly unreachableOwners = new Set<string>();
  private readonly unreachablePrefixes = new Set<string>();
  private down = false;
  private readonly downNamePrefixes = new Set<string>();

  constructor(private readonly clock: Clock) {}

  /**
   * Makes the store unreachable for everyone (true) or reachable again (false); with
   * `namePrefix`, only for the leases whose name starts with it (e.g. `"T/"`: the shards of
   * type T, not its coordinator's lease `"T.coordinator"`).
   */
  setUnavailable(down: boolean, namePrefix?: string): void {
    if (namePrefix === undefined) this.down = down;
    else if (down) this.downNamePrefixes.add(namePrefix);
    else this.downNamePrefixes.delete(namePrefix);
  }

  /** The newest fencing token of `name` (undefined: never acquired). */
  newestToken(name: string): number | undefined {
    return this.tokens.get(name);
  }

  async acquireLease(name: string, owner: string, ttlMs: number): Promise<number | undefined> {
    return this.grant(name, owner, ttlMs);
  }

  async releaseLease(name: string, owner: string): Promise<boolean> {
    return this.release(name, owner);
  }

  /**
   * @internal One atomic acquire-or-renew: the holding's token when `owner` holds `name`
   * afterwards, else undefined.
   */
  grant(name: string, owner: string, ttlMs: number): number | undefined {
    this.assertReachable(name, owner);
    const now = this.clock.now();
    const h = this.holders.get(name);
    if (h !== undefined && h.expiresAt > now) {
      if (h.owner !== owner) return undefined;
      h.expiresAt = now + ttlMs;
      return h.token;
    }
    const token = (this.tokens.get(name) ?? 0) + 1;
    this.tokens.set(name, token);
    this.holders.set(name, { owner, expiresAt: now + ttlMs, token });
    return token;
  }

  /** Makes the store unreachable for `owner` (its operations fail) until `heal`. */
  blackhole(owner: string): void {
    this.unreachableOwners.add(owner);
  }
  heal(owner: string): void {
    this.unreachableOwners.delete(owner);
    this.unreachablePrefixes.delete(owner);
  }

  /**
   * Makes the store unreachable for every owner whose name starts with `prefix` (a
   * member's unique address: all of its shard leases) until `heal(prefix)`.
   */
  blackholePrefix(prefix: string): void {
    this.unreachablePrefixes.add(prefix);
  }

  holderOf(name: string): string | undefined {
    const h = this.holders.get(name);
    return h !== undefined && h.expiresAt > this.clock.now() ? h.owner : undefined;
  }

  /** @internal */
  tryAcquire(name: string, owner: string, ttlMs: number): boolean {
    return this.grant(name, owner, ttlMs) !== undefined;
  }

  /** @internal The token of `owner`'s live holding of `name` (undefined: none). */
  tokenOf(name: string, owner: string): number | undefined {
    const h = this.holders.get(name);
    return h !== undefined && h.owner === owner && h.expiresAt > this.clock.now()
      ? h.token
      : undefined;
  }

  /** @internal */
  release(name: string, owner: string): boolean {
    this.assertReachable(name, owner);
    const h = this.holders.get(name);
    if (h === undefined || h.owner !== owner) return false;
    this.holders.delete(name);
    return true;
  }

  private assertReachable(name: string, owner: string): void {
    if (this.down) throw new LeaseUnavailableError(name, owner, "lease store unavailable");
    for (const p of this.downNamePrefixes)
      if (name.startsWith(p))
        throw new LeaseUnavailableError(name, owner, `lease store unavailable for ${p}*`);
    for (const p of this.unreachablePrefixes)
      if (owner.startsWith(p))
        throw new LeaseUnavailableError(name, owner, `lease store unreachable from ${p}`);
    if (this.unreachableOwners.has(owner))
      throw new LeaseUnavailableError(name, owner, `lease store unreachable from ${owner}`);
  }
}

export class MemoryLease implements Lease {
  private heldUntil = Number.NEGATIVE_INFINITY;
  private token: number | undefined;
  private renewal: Disposable | null = null;
  private onLost: ((reason: unknown) => void) | undefined;

  constructor(
    private readonly store: MemoryLeaseStore,
    readonly name: string,
    readonly owner: string,
    private readonly clock: Clock,
    private readonly scheduler: Scheduler,
    private readonly timings: LeaseTimings = defaultLeaseTimings,
  ) {
    validateLeaseTimings(timings);
  }

  async acquire(onLost?: (reason: unknown) => void): Promise<boolean> {
    this.onLost = onLost;
    const token = this.store.grant(this.name, this.owner, this.timings.ttlMs);
    if (token === undefined) return false;
    this.token = token;
    this.heldUntil = this.clock.now() + this.timings.ttlMs;
    this.scheduleRenewal();
    return true;
  }

  async release(): Promise<boolean> {
    this.renewal?.dispose();
    this.renewal = null;
    this.heldUntil = Number.NEGATIVE_INFINITY;
    return this.store.release(this.name, this.owner);
  }

  checkLease(): boolean {
    return this.clock.now() < this.heldUntil;
  }

  fencingToken(): number | undefined {
    return this.checkLease() ? this.token : undefined;
  }

  private scheduleRenewal(): void {
    this.renewal?.dispose();
    this.renewal = this.scheduler.schedule(this.timings.heartbeatIntervalMs, () => {
      this.renewal = null;
      try {
        const token = this.store.grant(this.name, this.owner, this.timings.ttlMs);
        if (token !== undefined) {
          this.token = token;
          this.heldUntil = this.clock.now() + this.timings.ttlMs;
          this.scheduleRenewal();
          return;
        }
        this.lost(new LeaseLostError(this.name, this.owner));
      } catch (error) {
        // Unreachable store: keep believing until the ttl passes, retry meanwhile.
        if (this.checkLease()) this.scheduleRenewal();
        else this.lost(error);
      }
    });
  }

  private lost(reason: unknown): void {
    this.heldUntil = Number.NEGATIVE_INFINITY;
    this.onLost?.(reason);
  }
}
