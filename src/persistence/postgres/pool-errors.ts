/**
 * node-postgres emits "error" on a pool when an IDLE client's connection dies (the server
 * restarted, an administrator terminated the backend, the network dropped it); with no
 * listener Node treats it as an uncaught error and the process exits. The pool has
 * already discarded that client, and the next query opens a new connection (and fails
 * like any query while the database is down), so shardkit's journal, snapshot store and
 * lease store add one listener to the pools they are given that only counts these errors:
 * a database outage makes writes and lease renewals fail (entities stop, shards stop at
 * their lease deadline) instead of killing the member. Errors of queries in flight still
 * reach their callers. Added once per pool.
 */
import type pg from "pg";

const counts = new WeakMap<pg.Pool, { idleClientErrors: number }>();

/** Adds the listener to `pool` unless it has it already. */
export function survivePoolErrors(pool: pg.Pool): void {
  if (counts.has(pool)) return;
  const c = { idleClientErrors: 0 };
  counts.set(pool, c);
  pool.on("error", () => {
    c.idleClientErrors++;
  });
}

/** How many idle-client errors `pool` emitted since survivePoolErrors (0 if never added). */
export function idleClientErrorsOf(pool: pg.Pool): number {
  return counts.get(pool)?.idleClientErrors ?? 0;
}
