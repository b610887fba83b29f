/**
 * Settings of the SQLite plugin (besides the shared journal and snapshot settings).
 * `synchronous: "full"` (default) fsyncs the WAL on every commit, so an acknowledged
 * event survives a power loss; "normal" survives a process crash (kill -9) but may lose
 * the last commits on power loss, for more throughput. Group commit makes "full" cheap:
 * one fsync per batch, not per event. Checkpoints (copying the WAL into the database
 * file) run on a worker thread every walCheckpointIntervalMs (sqlite-checkpointer.ts);
 * a commit checkpoints inline (and stalls the event loop meanwhile) only when the WAL
 * has grown past walAutocheckpointPages anyway (10 000 pages measured ~1.5x the
 * throughput of SQLite's 1 000 when every checkpoint ran inline).
 *
 * Lock waits: a write that finds another connection's write lock taken blocks the event
 * loop for at most busyBlockMs, then retries at the next event-loop turns for busySpinMs
 * and after that on a timer, up to busyTimeoutMs in
 * all (see sqlite-busy.ts): a process paused inside a transaction must not stall every
 * other member's event loop.
 */
import { int, oneOf, type RulesOf, resolveSettings } from "../../base/settings.js";
import { DEFAULT_TABLE_PREFIX, validateTablePrefix } from "../persistence-settings.js";

export interface SqliteSettings {
  /** Prefix of every table name. */
  readonly tablePrefix: string;
  /**
   * How long, in all, a write waits for another connection's write lock before it fails
   * (the wait yields to the event loop; see busyBlockMs). Also the synchronous wait of
   * the schema migration when the file is opened.
   */
  readonly busyTimeoutMs: number;
  /**
   * How long one attempt may block the event loop waiting for the lock (SQLite's busy
   * timeout on the connection); after it the write retries on a timer. 0: never block.
   */
  readonly busyBlockMs: number;
  /**
   * How long a group-commit batch of the journal may block the event loop waiting for
   * the lock (the connection's busy timeout during the batch), instead of busyBlockMs;
   * after it the batch retries on a timer like every other write. 0: never block, so
   * while another process commits this one keeps receiving the next batch's appends.
   */
  readonly appendBusyBlockMs: number;
  /**
   * How long a write that found the lock taken retries at every event-loop turn (the
   * loop's I/O runs between two attempts) before it retries on a timer. With several
   * processes on one file the lock is usually free again within one commit, sooner than
   * any timer fires. 0: timer retries only.
   */
  readonly busySpinMs: number;
  /** Cap of the delay between two attempts (the delay doubles from 1 ms). */
  readonly busyRetryDelayMaxMs: number;
  /** SQLite's `synchronous` pragma in WAL mode (see the module comment). */
  readonly synchronous: "full" | "normal";
  /**
   * WAL size in pages (4 KiB each by default) after which a commit checkpoints the WAL
   * into the database file. Larger: fewer, longer checkpoint stalls and more disk.
   */
  readonly walAutocheckpointPages: number;
  /**
   * How often a worker thread checkpoints the WAL into the database file (PASSIVE, off
   * the event loop). 0: no worker; commits checkpoint inline at walAutocheckpointPages.
   * Ignored for ":memory:".
   */
  readonly walCheckpointIntervalMs: number;
}

export const defaultSqliteSettings: SqliteSettings = Object.freeze({
  tablePrefix: DEFAULT_TABLE_PREFIX,
  busyTimeoutMs: 5_000,
  busyBlockMs: 10,
  appendBusyBlockMs: 0,
  busySpinMs: 2,
  busyRetryDelayMaxMs: 50,
  synchronous: "full",
  walAutocheckpointPages: 10_000,
  walCheckpointIntervalMs: 100,
});

const rules: RulesOf<SqliteSettings> = {
  tablePrefix: (key, value) => validateTablePrefix(value, key),
  busyTimeoutMs: int(0, 600_000),
  busyBlockMs: int(0, 600_000),
  appendBusyBlockMs: int(0, 600_000),
  busySpinMs: int(0, 60_000),
  busyRetryDelayMaxMs: int(1, 60_000),
  synchronous: oneOf("full", "normal"),
  walAutocheckpointPages: int(100, 10_000_000),
  walCheckpointIntervalMs: int(0, 600_000),
};

export function resolveSqliteSettings(overrides?: Partial<SqliteSettings>): SqliteSettings {
  return resolveSettings("sqlite.", defaultSqliteSettings, rules, overrides);
}
