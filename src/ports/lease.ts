/**
 * Lease port: a named, time-limited exclusive right held by one owner at a time, backed
 * by something all sides of a network partition can reach (a database). The split brain
 * resolver's lease-majority strategy lets only the side that holds the lease survive; a
 * singleton may require one before it starts.
 *
 * Holding a lease is only ever *believed* locally: `checkLease()` is true while the last
 * successful acquire/renewal is younger than the lease's time-to-live, so an owner that
 * can no longer renew stops believing it holds the lease before anyone else can take it.
 *
 * Fencing tokens: every acquisition of a lease name (by a new owner, or after the lease
 * expired or was released) gets a token greater than every earlier token of that name;
 * renewals by the holder keep it. Writes that carry the token (Journal `fence`) let a
 * store refuse a holder that lost the lease without knowing it (a paused process). See
 * docs/sharding.md, "Leases and fencing".
 */
import { ShardkitError } from "../base/errors.js";

/** The lease store cannot be reached from this owner; acquire, renew or release failed. */
export class LeaseUnavailableError extends ShardkitError {
  constructor(leaseName: string, owner: string, detail: string) {
    super("LEASE_UNAVAILABLE", `lease ${leaseName} unavailable to ${owner}: ${detail}`, {
      leaseName,
      owner,
    });
  }
}

/** A held lease was lost: another owner took it (the reason given to `onLost`). */
export class LeaseLostError extends ShardkitError {
  constructor(leaseName: string, owner: string) {
    super("LEASE_LOST", `lease ${leaseName} was taken by another owner`, { leaseName, owner });
  }
}

export interface Lease {
  /** The lease's name (what is locked). */
  readonly name: string;
  /** Who this instance acquires for. */
  readonly owner: string;
  /**
   * Tries to acquire (or renew) the lease. Resolves true when held, false when another
   * owner holds it. `onLost` is called if a held lease is later lost (renewal failed).
   */
  acquire(onLost?: (reason: unknown) => void): Promise<boolean>;
  /** Gives the lease up; resolves true if it was held. */
  release(): Promise<boolean>;
  /** True while this owner believes it holds the lease (see the module comment). */
  checkLease(): boolean;
  /**
   * The fencing token of the current holding (undefined when not held, or when the
   * implementation has no tokens).
   */
  fencingToken?(): number | undefined;
}

/**
 * The store behind fenced leases, used directly by shard leases (the shard times its own
 * renewals and deadline, core/shard/shard-lease-machine.ts).
 */
export interface LeaseStore {
  /**
   * Acquires or renews `name` for `owner` for `ttlMs` (counted by the store from when it
   * handles the request). Resolves the fencing token when `owner` holds the lease
   * afterwards, undefined when another owner holds it. A renewal by the holder keeps the
   * token; a new acquisition gets a greater one than any before (see the module comment).
   * @throws LeaseUnavailableError (or a PersistenceStoreError) when the store cannot be reached.
   */
  acquireLease(name: string, owner: string, ttlMs: number): Promise<number | undefined>;
  /** Gives `name` up if `owner` holds it (the token is kept, never reused). */
  releaseLease(name: string, owner: string): Promise<boolean>;
}

/** Creates the lease for a name and owner (so components can make their own). */
export type LeaseProvider = (name: string, owner: string) => Lease;
