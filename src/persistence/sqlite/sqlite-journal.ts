/**
 * Journal on SQLite (better-sqlite3, WAL). better-sqlite3 is synchronous, so group
 * commit is: appends called during one event-loop turn are queued, and on the next
 * setImmediate one `BEGIN IMMEDIATE` transaction writes them all (one WAL fsync for the
 * whole batch).
 *
 * Conflicts: inside the transaction each append first reads its id's highest sequence
 * number (max of the journal rows and the deleted-to mark) and is refused with
 * JournalConflictError unless it starts at highest + 1, while the rest of the batch
 * commits. BEGIN IMMEDIATE holds the database's write lock from the start, so no other
 * connection or process can write between that check and the insert. Should a
 * primary-key violation happen anyway, the batch's transaction is rolled back and the
 * batch replayed one append per transaction, so it fails only the offending append.
 * (Per-append savepoints would do the same but cost ~8 µs per append, more than the
 * insert itself.)
 *
 * Lock waits: a batch (and every other statement) that finds another connection's write
 * lock taken is retried on a timer (sqlite-busy.ts), so a paused process holding the lock
 * delays appends but does not stall this process's event loop. A batch does not block
 * for the lock at all by default (appendBusyBlockMs 0, the busy timeout is set to it
 * around the batch): with several processes on one file the lock changes hands at every
 * commit, and a batch blocked in SQLite's busy wait would freeze this process's event
 * loop (no asks received, no replies sent) while another process commits.
 *
 * Fencing: an append with a fence first reads the newest token of its key (`<p>fence`)
 * in the same transaction; an older token gets FencedWriteError and nothing is written,
 * else the token is recorded together with the events.
 */
import type Database from "better-sqlite3";
import {
  FencedWriteError,
  type Journal,
  JournalConflictError,
  type JournalEvent,
  type PersistedEvent,
  PersistenceStoreError,
  type WriteFence,
} from "../../ports/journal.js";
import {
  type AppendOutcome,
  type GroupCommitStats,
  GroupCommitter,
  type PendingAppend,
} from "../group-committer.js";
import {
  assertPersistenceId,
  assertSeqNr,
  checkAppend,
  checkFenceInput,
  readLimit,
} from "../persistence-input.js";
import { type JournalSettings, resolveJournalSettings } from "../persistence-settings.js";
import { type BusyWait, untilUnlocked, whenUnlocked } from "./sqlite-busy.js";
import { asBuffer, asBytes, type SqliteTables } from "./sqlite-schema.js";
import { defaultSqliteSettings } from "./sqlite-settings.js";

interface EventRow {
  sequence_nr: number;
  serializer_id: number;
  payload: Buffer;
  tags: string | null;
  timestamp_ms: number;
}

export interface SqliteJournalOptions {
  readonly journal?: Partial<JournalSettings>;
  /** How to wait for another connection's write lock (default: the SQLite defaults). */
  readonly busy?: BusyWait;
  /**
   * The connection's busy timeout while a group-commit batch runs (see
   * SqliteSettings.appendBusyBlockMs); it must be the connection's timeout otherwise
   * (`busy.busyBlockMs`), which is restored after the batch. Default: busy.busyBlockMs
   * (no change around batches).
   */
  readonly appendBusyBlockMs?: number;
}

/** Journal on one SQLite connection with group commit (see the module comment). */
export class SqliteJournal implements Journal {
  readonly settings: JournalSettings;
  private readonly committer: GroupCommitter;
  private readonly stmts: Statements;
  private readonly writeBatch: (batch: readonly PendingAppend[], out: AppendOutcome[]) => void;
  private readonly deleteTx: (persistenceId: string, toSeqNr: number) => void;
  private readonly fenceTx: (fence: WriteFence) => void;
  private readonly busy: BusyWait;
  /** Set and restore the busy timeout around a batch; undefined: no change. */
  private readonly batchTimeout:
    | { readonly set: () => void; readonly restore: () => void }
    | undefined;

  /** `db` must have the schema (see `migrateSqlite`); the journal does not close it. */
  constructor(db: Database.Database, tables: SqliteTables, options: SqliteJournalOptions = {}) {
    this.settings = resolveJournalSettings(options.journal);
    this.busy = options.busy ?? defaultSqliteSettings;
    const batchBlockMs = options.appendBusyBlockMs ?? this.busy.busyBlockMs;
    if (batchBlockMs !== this.busy.busyBlockMs) {
      // db.pragma prepares each time: SQLite applies a busy_timeout pragma when the
      // statement is prepared, so re-running one prepared statement would not set it again
      const set = `busy_timeout = ${Math.trunc(batchBlockMs)}`;
      const restore = `busy_timeout = ${Math.trunc(this.busy.busyBlockMs)}`;
      this.batchTimeout = { set: () => db.pragma(set), restore: () => db.pragma(restore) };
    }
    this.stmts = prepareStatements(db, tables);
    this.writeBatch = db.transaction((batch, out) => this.writeAll(batch, out)).immediate;
    this.deleteTx = db.transaction((id: string, toSeqNr: number) => {
      const upTo = Math.min(toSeqNr, this.highest(id));
      if (upTo <= 0) return;
      this.stmts.deleteEvents.run(id, upTo);
      this.stmts.markDeleted.run(id, upTo);
    }).immediate;
    this.fenceTx = db.transaction((fence: WriteFence) => {
      const e = this.fenceError(fence);
      if (e !== undefined) throw e;
      this.stmts.setFence.run(fence.key, fence.token);
    }).immediate;
    this.committer = new GroupCommitter({
      ...this.settings,
      batchesInFlightMax: 1,
      defer: (fn) => setImmediate(fn),
      commit: (batch, more) => this.commit(batch, more),
    });
  }

  async append(
    persistenceId: string,
    expectedSeqNr: number,
    events: readonly JournalEvent[],
    fence?: WriteFence,
  ): Promise<void> {
    const bytes = checkAppend(persistenceId, expectedSeqNr, events, this.settings, fence);
    return this.committer.submit(persistenceId, expectedSeqNr, events, bytes, fence);
  }

  async advanceFence(fence: WriteFence): Promise<void> {
    checkFenceInput(fence);
    try {
      await untilUnlocked(() => this.fenceTx(fence), this.busy);
    } catch (error) {
      if (error instanceof FencedWriteError) throw error;
      throw new PersistenceStoreError("advanceFence", fence.key, error);
    }
  }

  /** The newest fencing token seen for `key` (undefined: none). */
  newestToken(key: string): number | undefined {
    return this.stmts.getFence.get(key) as number | undefined;
  }

  async read(
    persistenceId: string,
    fromSeqNr: number,
    toSeqNr: number,
    max?: number,
  ): Promise<readonly PersistedEvent[]> {
    const limit = readLimit(persistenceId, fromSeqNr, toSeqNr, max, this.settings);
    if (limit === 0 || toSeqNr < fromSeqNr) return [];
    let rows: EventRow[];
    try {
      rows = await untilUnlocked(
        () => this.stmts.read.all(persistenceId, fromSeqNr, toSeqNr, limit),
        this.busy,
      );
    } catch (error) {
      throw new PersistenceStoreError("read", persistenceId, error);
    }
    return rows.map((r) => ({
      persistenceId,
      sequenceNr: r.sequence_nr,
      serializerId: r.serializer_id,
      bytes: asBytes(r.payload),
      tags: r.tags === null ? [] : (JSON.parse(r.tags) as string[]),
      timestampMs: r.timestamp_ms,
    }));
  }

  async highestSequenceNr(persistenceId: string): Promise<number> {
    assertPersistenceId(persistenceId);
    try {
      return await untilUnlocked(() => this.highest(persistenceId), this.busy);
    } catch (error) {
      throw new PersistenceStoreError("highestSequenceNr", persistenceId, error);
    }
  }

  async deleteTo(persistenceId: string, toSeqNr: number): Promise<void> {
    assertPersistenceId(persistenceId);
    assertSeqNr(toSeqNr, "toSeqNr", 0);
    try {
      await untilUnlocked(() => this.deleteTx(persistenceId, toSeqNr), this.busy);
    } catch (error) {
      throw new PersistenceStoreError("deleteTo", persistenceId, error);
    }
  }

  close(): Promise<void> {
    return this.committer.close();
  }

  /** Group-commit counters (batches vs appends shows how well writes are grouped). */
  stats(): GroupCommitStats {
    return this.committer.stats();
  }

  private highest(persistenceId: string): number {
    return this.stmts.highest.get(persistenceId, persistenceId) as number;
  }

  /**
   * Writes a batch now, or later when another connection holds the write lock; each
   * later attempt first takes in the appends that arrived meanwhile (`more`), so they do
   * not wait for a batch of their own behind the lock.
   */
  private commit(
    batch: readonly PendingAppend[],
    more: () => readonly PendingAppend[],
  ): AppendOutcome[] | Promise<AppendOutcome[]> {
    let current = batch;
    let attempts = 0;
    return whenUnlocked(() => {
      if (attempts++ > 0) {
        const joined = more();
        if (joined.length > 0) current = [...current, ...joined];
      }
      return this.commitNow(current);
    }, this.busy);
  }

  private commitNow(batch: readonly PendingAppend[]): AppendOutcome[] {
    if (this.batchTimeout === undefined) return this.commitBlocking(batch);
    this.batchTimeout.set();
    try {
      return this.commitBlocking(batch);
    } finally {
      this.batchTimeout.restore();
    }
  }

  /** One attempt at the batch, with the connection's current busy timeout. */
  private commitBlocking(batch: readonly PendingAppend[]): AppendOutcome[] {
    const out: AppendOutcome[] = new Array(batch.length).fill(undefined);
    try {
      this.writeBatch(batch, out);
      return out;
    } catch (error) {
      // The whole transaction was rolled back; find the offender one append at a time.
      if (isConstraintViolation(error) && batch.length > 1) return this.writeEach(batch);
      // SQLITE_BUSY included: whenUnlocked retries the whole batch
      throw error;
    }
  }

  /** One append per transaction: only after a batch hit a constraint violation. */
  private writeEach(batch: readonly PendingAppend[]): AppendOutcome[] {
    return batch.map((a) => {
      const out: AppendOutcome[] = [undefined];
      try {
        this.writeBatch([a], out);
      } catch (error) {
        out[0] = isConstraintViolation(error)
          ? new JournalConflictError(a.persistenceId, a.expectedSeqNr)
          : new PersistenceStoreError("append", a.persistenceId, error);
      }
      return out[0];
    });
  }

  private writeAll(batch: readonly PendingAppend[], out: AppendOutcome[]): void {
    for (let i = 0; i < batch.length; i++) {
      const a = batch[i] as PendingAppend;
      if (a.fence !== undefined) {
        const fenced = this.fenceError(a.fence, a.persistenceId);
        if (fenced !== undefined) {
          out[i] = fenced;
          continue;
        }
      }
      const highest = this.highest(a.persistenceId);
      if (a.expectedSeqNr !== highest + 1) {
        out[i] = new JournalConflictError(a.persistenceId, a.expectedSeqNr, highest);
        continue;
      }
      this.insertEvents(a);
      if (a.fence !== undefined) this.stmts.setFence.run(a.fence.key, a.fence.token);
    }
  }

  private fenceError(fence: WriteFence, persistenceId?: string): FencedWriteError | undefined {
    const newest = this.stmts.getFence.get(fence.key) as number | undefined;
    return newest !== undefined && newest > fence.token
      ? new FencedWriteError(fence, newest, persistenceId)
      : undefined;
  }

  private insertEvents(a: PendingAppend): void {
    let seq = a.expectedSeqNr;
    for (const e of a.events) {
      const tags = e.tags === undefined || e.tags.length === 0 ? null : JSON.stringify(e.tags);
      this.stmts.insert.run(
        a.persistenceId,
        seq++,
        e.serializerId,
        asBuffer(e.bytes),
        tags,
        e.timestampMs,
      );
    }
  }
}

function isConstraintViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("SQLITE_CONSTRAINT");
}

type Statements = ReturnType<typeof prepareStatements>;

function prepareStatements(db: Database.Database, tables: SqliteTables) {
  const { journal: j, deleted: d, fence: f } = tables;
  return {
    highest: db
      .prepare<[string, string], number>(
        `SELECT max(coalesce((SELECT max(sequence_nr) FROM ${j} WHERE persistence_id = ?), 0),
                    coalesce((SELECT deleted_to FROM ${d} WHERE persistence_id = ?), 0))`,
      )
      .pluck(),
    insert: db.prepare(
      `INSERT INTO ${j} (persistence_id, sequence_nr, serializer_id, payload, tags, timestamp_ms)
       VALUES (?, ?, ?, ?, ?, ?)`,
    ),
    read: db.prepare<[string, number, number, number], EventRow>(
      `SELECT sequence_nr, serializer_id, payload, tags, timestamp_ms FROM ${j}
       WHERE persistence_id = ? AND sequence_nr >= ? AND sequence_nr <= ?
       ORDER BY sequence_nr LIMIT ?`,
    ),
    getFence: db.prepare<[string], number>(`SELECT token FROM ${f} WHERE fence_key = ?`).pluck(),
    setFence: db.prepare(
      `INSERT INTO ${f} (fence_key, token) VALUES (?, ?)
       ON CONFLICT (fence_key) DO UPDATE SET token = max(token, excluded.token)`,
    ),
    deleteEvents: db.prepare(`DELETE FROM ${j} WHERE persistence_id = ? AND sequence_nr <= ?`),
    markDeleted: db.prepare(
      `INSERT INTO ${d} (persistence_id, deleted_to) VALUES (?, ?)
       ON CONFLICT (persistence_id) DO UPDATE SET deleted_to = max(deleted_to, excluded.deleted_to)`,
    ),
  };
}
