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
 * still finds the lock taken fails with SQLITE_BUSY; `whenUnlocked` then retries it on a
 * timer (delays doubling from 1 ms up to `busyRetryDelayMaxMs`) until `busyTimeoutMs`
 * after the first attempt, and only then reports the failure. The first attempt runs at
 * once, so an uncontended write costs nothing extra.
 */

/** The three settings of the wait (see SqliteSettings). */
export interface BusyWait {
  readonly busyTimeoutMs: number;
  readonly busyBlockMs: number;
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
  for (let delay = 1; ; delay = Math.min(delay * 2, wait.busyRetryDelayMaxMs)) {
    const left = wait.busyTimeoutMs - (now() - startedAt);
    if (left <= 0) throw last;
    await new Promise((resolve) => setTimeout(resolve, Math.min(delay, left)));
    try {
      return op();
    } catch (error) {
      if (!isSqliteBusy(error)) throw error;
      last = error;
    }
  }
}
