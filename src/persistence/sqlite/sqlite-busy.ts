/**
 * Waiting for another connection's write lock without stalling the event loop.
 *
 * better-sqlite3 is synchronous: with SQLite's own busy timeout, a statement that finds
 * the write lock taken sleeps inside the call, and the whole event loop with it. When
 * another process holds the lock for long (it was paused by SIGSTOP or a debugger inside
 * a transaction, or its disk stalls an fsync), every member sharing the file would stop
 * answering heartbeats and lease renewals, and the cluster would down healthy members.
 *
 * So the connection's own busy timeout is short (`busyBlockMs`), and a statement that
 * still finds the lock taken fails with SQLITE_BUSY; `whenUnlocked` then retries it at
 * every event-loop turn (`setImmediate`, the loop's I/O handled between two attempts) for
 * `busySpinMs`, then on a timer (delays doubling from 1 ms up to `busyRetryDelayMaxMs`)
 * until `busyTimeoutMs` after the first attempt, and only then reports the failure. The
 * first attempt runs at once, so an uncontended write costs nothing extra.
 *
 * Why the turns first: when several processes share one file, the lock changes hands at
 * every commit and is usually free again within a fraction of a millisecond (one batch's
 * transaction), while a timer cannot fire sooner than 1 ms and fired about 1.7 ms late
 * under load (docs/persistence.md). Retrying at the next turns takes the lock as soon as
 * it is free; a process paused inside a transaction costs the others at most busySpinMs
 * of attempts before they fall back to the timer.
 */

/** The three settings of the wait (see SqliteSettings). */
export interface BusyWait {
  readonly busyTimeoutMs: number;
  readonly busyBlockMs: number;
  readonly busySpinMs: number;
  readonly busyRetryDelayMaxMs: number;
}

/** True for SQLite's "database is locked" family (SQLITE_BUSY and its extended codes). */
export function isSqliteBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && (code === "SQLITE_BUSY" || code.startsWith("SQLITE_BUSY_"));
}

/**
 * Runs `op` now; if it fails with SQLITE_BUSY, retries it later (see the module comment).
 * Returns the value directly when the first attempt succeeds, else a promise. Any other
 * error is thrown (or rejected) at once; the last SQLITE_BUSY error after the wait.
 */
export function whenUnlocked<T>(
  op: () => T,
  wait: BusyWait,
  now: () => number = Date.now,
): T | Promise<T> {
  const startedAt = now();
  try {
    return op();
  } catch (error) {
    if (!isSqliteBusy(error)) throw error;
    return retry(op, wait, now, startedAt, error);
  }
}

/** `whenUnlocked` as a promise (for the asynchronous store methods). */
export async function untilUnlocked<T>(op: () => T, wait: BusyWait): Promise<T> {
  return whenUnlocked(op, wait);
}

async function retry<T>(
  op: () => T,
  wait: BusyWait,
  now: () => number,
  startedAt: number,
  first: unknown,
): Promise<T> {
  let last = first;
  const spinUntil = startedAt + Math.min(wait.busySpinMs, wait.busyTimeoutMs);
  let delay = 1;
  for (;;) {
    if (now() < spinUntil) await new Promise((resolve) => setImmediate(resolve));
    else {
      const left = wait.busyTimeoutMs - (now() - startedAt);
      if (left <= 0) throw last;
      await new Promise((resolve) => setTimeout(resolve, Math.min(delay, left)));
      delay = Math.min(delay * 2, wait.busyRetryDelayMaxMs);
    }
    try {
      return op();
    } catch (error) {
      if (!isSqliteBusy(error)) throw error;
      last = error;
    }
  }
}
