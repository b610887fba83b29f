/**
 * Background WAL checkpoints: a worker thread with its own connection to the file runs
 * `PRAGMA wal_checkpoint(PASSIVE)` every `walCheckpointIntervalMs`, so the copy of the WAL
 * into the database file (and its fsyncs) happens off the event loop.
 *
 * Why: better-sqlite3 is synchronous, and SQLite's automatic checkpoint runs inside the
 * commit that crosses `wal_autocheckpoint` pages. Under a steady stream of appends that
 * commit stalled the event loop for tens of milliseconds (up to ~130 ms measured on a
 * loaded VM, see docs/persistence.md, "Throughput and durability"), with every ask of that
 * process waiting behind it: the p99 of a persisted request.
 *
 * Safety: a checkpoint only copies committed pages from the WAL into the database file;
 * it never changes what is committed, so durability is that of `synchronous` either way.
 * A PASSIVE checkpoint takes no lock that writers or readers wait for; it copies what it
 * can and the rest on a later run. The connections keep SQLite's automatic checkpoint
 * at `walAutocheckpointPages` as a bound: when the worker keeps up, the WAL never grows
 * that far and commits never checkpoint; should the worker fall behind or fail, commits
 * checkpoint inline as before. Failures are counted, never thrown.
 *
 * The worker runs plain JavaScript (`eval`), loading the same better-sqlite3 the
 * process uses (by its resolved path), so it works from sources and from the build.
 */
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/** Counters of a background checkpointer. */
export interface SqliteCheckpointStats {
  /** Checkpoint runs completed. */
  readonly runs: number;
  /** WAL frames copied into the database file, summed over the runs. */
  readonly framesCheckpointed: number;
  /** Runs that failed (the database was busy or the file unreadable); the next run retries. */
  readonly failures: number;
  /** The message of the last failure. */
  readonly lastError?: string;
}

/** The worker's options (plain data: they cross the thread boundary). */
interface WorkerData {
  readonly driver: string;
  readonly path: string;
  readonly intervalMs: number;
  readonly synchronous: string;
}

type WorkerMessage =
  | { readonly t: "run"; readonly frames: number }
  | { readonly t: "failed"; readonly message: string };

const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma("busy_timeout = 0");
db.pragma("synchronous = " + workerData.synchronous);
const stmt = db.prepare("PRAGMA wal_checkpoint(PASSIVE)");
let last = 0;
const timer = setInterval(() => {
  try {
    const r = stmt.get();
    // frames backfilled so far in this WAL; a smaller count means the WAL was restarted
    const done = r.checkpointed < 0 ? 0 : r.checkpointed;
    const frames = done >= last ? done - last : done;
    last = done;
    parentPort.postMessage({ t: "run", frames });
  } catch (e) {
    parentPort.postMessage({ t: "failed", message: String(e && e.message ? e.message : e) });
  }
}, workerData.intervalMs);
parentPort.on("message", () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

/** A running background checkpointer. */
export interface SqliteCheckpointer {
  stats(): SqliteCheckpointStats;
  /** Stops the worker (idempotent); resolves when its connection is closed. */
  stop(): Promise<void>;
}

/**
 * Starts a checkpoint worker on the database file `path` (which must exist and be in WAL
 * mode). The worker does not keep the process alive.
 */
export function startSqliteCheckpointer(
  path: string,
  intervalMs: number,
  synchronous: "full" | "normal",
): SqliteCheckpointer {
  const data: WorkerData = {
    driver: createRequire(import.meta.url).resolve("better-sqlite3"),
    path,
    intervalMs,
    synchronous: synchronous.toUpperCase(),
  };
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: data });
  worker.unref();
  let runs = 0;
  let framesCheckpointed = 0;
  let failures = 0;
  let lastError: string | undefined;
  worker.on("message", (m: WorkerMessage) => {
    if (m.t === "run") {
      runs++;
      framesCheckpointed += m.frames;
    } else {
      failures++;
      lastError = m.message;
    }
  });
  const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
  worker.on("error", (e: Error) => {
    // the worker could not start (or died): commits checkpoint inline from now on
    failures++;
    lastError = e.message;
  });
  let stopping: Promise<void> | undefined;
  return {
    stats: () => ({
      runs,
      framesCheckpointed,
      failures,
      ...(lastError === undefined ? {} : { lastError }),
    }),
    stop: () => {
      stopping ??= (async () => {
        // Referenced again while it stops: an unreferenced worker's exit does not keep
        // the process alive, and a caller awaiting close() would see the process end
        // under it (the examples' second round never ran).
        worker.ref();
        worker.postMessage("stop");
        await exited;
      })();
      return stopping;
    },
  };
}
