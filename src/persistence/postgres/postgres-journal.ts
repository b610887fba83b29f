/**
 * Journal on PostgreSQL (node-postgres pool). Group commit: appends called during one
 * event-loop turn are written by ONE autocommit statement (atomic on its own), with up
 * to batchesInFlightMax such batches on separate pool clients.
 *
 * The statement (see APPEND_SQL) passes the batch as arrays and `unnest`s them, so its
 * text and parameter count do not depend on the batch size. It first reads, per append,
 * the id's highest sequence number (max of the journal rows and the deleted-to mark) and
 * inserts only the appends that start at highest + 1; the others get
 * JournalConflictError while the rest of the batch commits (pre-check).
 *
 * A writer on another node can still insert between that read and the insert. Then the
 * primary key raises a unique violation, which aborts the whole statement (so nothing
 * of the batch is written), and the batch is replayed one append per statement: only
 * the append that collided gets JournalConflictError (unique-violation handling).
 *
 * Statements are named (prepared once per pooled connection, then only bound and
 * executed) unless `namedStatements` is false; a statement's name is derived from its
 * text, so journals with different table prefixes never share one.
 *
 * Fenced appends (docs/sharding.md, "Leases and fencing") are written one per
 * transaction: the fence row of the key is upserted (and so locked) only when the
 * append's token is not older than the stored one; otherwise FencedWriteError and a
 * rollback. A concurrent `advanceFence` of a newer holder waits for that lock, so a stale
 * write either commits before the new holder's fence (and the new holder then reads it)
 * or is refused.
 */

import type pg from "pg";
import { murmur3OfString } from "../../base/hash.js";
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
import { survivePoolErrors } from "./pool-errors.js";
import {
  asBytes,
  migratePostgres,
  type PostgresTables,
  postgresTables,
} from "./postgres-schema.js";
import { type PostgresSettings, resolvePostgresSettings } from "./postgres-settings.js";

export interface PostgresJournalOptions extends Partial<PostgresSettings> {
  readonly pool: pg.Pool;
  readonly journal?: Partial<JournalSettings>;
}

interface EventRow {
  sequence_nr: string;
  serializer_id: string;
  payload: Buffer;
  tags: string[] | null;
  timestamp_ms: string;
}

const UNIQUE_VIOLATION = "23505";

/** Journal on a PostgreSQL pool with group commit (see the module comment). */
export class PostgresJournal implements Journal {
  readonly settings: JournalSettings;
  readonly pgSettings: PostgresSettings;
  readonly tables: PostgresTables;
  private readonly pool: pg.Pool;
  private readonly committer: GroupCommitter;
  private readonly sql: ReturnType<typeof statements>;
  private schema: Promise<unknown> | undefined;

  constructor(options: PostgresJournalOptions) {
    const { pool, journal, ...rest } = options;
    this.pool = pool;
    survivePoolErrors(pool);
    this.settings = resolveJournalSettings(journal);
    this.pgSettings = resolvePostgresSettings(rest);
    this.tables = postgresTables(this.pgSettings.tablePrefix);
    this.sql = statements(this.tables, this.pgSettings.namedStatements);
    this.committer = new GroupCommitter({
      ...this.settings,
      batchesInFlightMax: this.pgSettings.batchesInFlightMax,
      parallelBatchAppendsMin: this.pgSettings.parallelBatchAppendsMin,
      defer: (fn) => setImmediate(fn),
      commit: (batch) => this.commit(batch),
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
    const r = await this.query<{ token: string }>("advanceFence", fence.key, this.sql.setFence, [
      fence.key,
      fence.token,
    ]);
    if (r.rowCount === 1) return;
    const newest = await this.query<{ token: string }>(
      "advanceFence",
      fence.key,
      this.sql.getFence,
      [fence.key],
    );
    throw new FencedWriteError(fence, Number(newest.rows[0]?.token ?? 0));
  }

  /** The newest fencing token seen for `key` (undefined: none). */
  async newestToken(key: string): Promise<number | undefined> {
    const r = await this.query<{ token: string }>("newestToken", key, this.sql.getFence, [key]);
    const t = r.rows[0]?.token;
    return t === undefined ? undefined : Number(t);
  }

  async read(
    persistenceId: string,
    fromSeqNr: number,
    toSeqNr: number,
    max?: number,
  ): Promise<readonly PersistedEvent[]> {
    const limit = readLimit(persistenceId, fromSeqNr, toSeqNr, max, this.settings);
    if (limit === 0 || toSeqNr < fromSeqNr) return [];
    const r = await this.query<EventRow>("read", persistenceId, this.sql.read, [
      persistenceId,
      fromSeqNr,
      toSeqNr,
      limit,
    ]);
    return r.rows.map((row) => ({
      persistenceId,
      sequenceNr: Number(row.sequence_nr),
      serializerId: Number(row.serializer_id),
      bytes: asBytes(row.payload),
      tags: row.tags ?? [],
      timestampMs: Number(row.timestamp_ms),
    }));
  }

  async highestSequenceNr(persistenceId: string): Promise<number> {
    assertPersistenceId(persistenceId);
    const r = await this.query<{ highest: string }>(
      "highestSequenceNr",
      persistenceId,
      this.sql.highest,
      [persistenceId],
    );
    return Number(r.rows[0]?.highest ?? 0);
  }

  async deleteTo(persistenceId: string, toSeqNr: number): Promise<void> {
    assertPersistenceId(persistenceId);
    assertSeqNr(toSeqNr, "toSeqNr", 0);
    await this.query("deleteTo", persistenceId, this.sql.deleteTo, [persistenceId, toSeqNr]);
  }

  /** Drains pending appends; the pool is the caller's to end. */
  close(): Promise<void> {
    return this.committer.close();
  }

  /** Group-commit counters (batches vs appends shows how well writes are grouped). */
  stats(): GroupCommitStats {
    return this.committer.stats();
  }

  /** Creates the tables on first use (unless createSchema is false); retried after a failure. */
  private ensureSchema(): Promise<unknown> {
    if (!this.pgSettings.createSchema) return Promise.resolve();
    this.schema ??= migratePostgres(this.pool, this.pgSettings.tablePrefix).catch((error) => {
      this.schema = undefined;
      throw error;
    });
    return this.schema;
  }

  private async query<R extends pg.QueryResultRow>(
    operation: string,
    persistenceId: string | undefined,
    statement: Statement,
    values: unknown[],
  ): Promise<pg.QueryResult<R>> {
    try {
      await this.ensureSchema();
      return await this.pool.query<R>({ ...statement, values });
    } catch (error) {
      throw new PersistenceStoreError(operation, persistenceId, error);
    }
  }

  private async commit(all: readonly PendingAppend[]): Promise<AppendOutcome[]> {
    await this.ensureSchema();
    if (all.every((a) => a.fence === undefined)) return this.commitUnfenced(all);
    const unfenced = all.filter((a) => a.fence === undefined);
    const [plain, fenced] = await Promise.all([
      unfenced.length === 0 ? [] : this.commitUnfenced(unfenced),
      Promise.all(all.filter((a) => a.fence !== undefined).map((a) => this.writeFenced(a))),
    ]);
    let p = 0;
    let f = 0;
    return all.map((a) => (a.fence === undefined ? plain[p++] : fenced[f++]));
  }

  /** One fenced append in its own transaction (see the module comment). */
  private async writeFenced(a: PendingAppend): Promise<AppendOutcome> {
    const fence = a.fence as WriteFence;
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      return new PersistenceStoreError("append", a.persistenceId, error);
    }
    try {
      await client.query("BEGIN");
      const set = await client.query({ ...this.sql.setFence, values: [fence.key, fence.token] });
      let outcome: AppendOutcome;
      if (set.rowCount !== 1) {
        const newest = await client.query<{ token: string }>({
          ...this.sql.getFence,
          values: [fence.key],
        });
        outcome = new FencedWriteError(fence, Number(newest.rows[0]?.token ?? 0), a.persistenceId);
      } else outcome = (await this.writeBatch([a], client))[0];
      await client.query(outcome === undefined ? "COMMIT" : "ROLLBACK");
      return outcome;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      return pgCode(error) === UNIQUE_VIOLATION
        ? new JournalConflictError(a.persistenceId, a.expectedSeqNr)
        : new PersistenceStoreError("append", a.persistenceId, error);
    } finally {
      client.release();
    }
  }

  private async commitUnfenced(batch: readonly PendingAppend[]): Promise<AppendOutcome[]> {
    try {
      return await this.writeBatch(batch);
    } catch (error) {
      if (pgCode(error) !== UNIQUE_VIOLATION) throw error;
      if (batch.length === 1) {
        const a = batch[0] as PendingAppend;
        return [new JournalConflictError(a.persistenceId, a.expectedSeqNr)];
      }
    }
    // Another writer won a race inside this batch: find out which append by writing
    // each on its own (distinct ids, so they can run concurrently).
    return Promise.all(
      batch.map((a) =>
        this.writeBatch([a]).then(
          (outcomes) => outcomes[0],
          (error: unknown) => {
            if (pgCode(error) === UNIQUE_VIOLATION)
              return new JournalConflictError(a.persistenceId, a.expectedSeqNr);
            return new PersistenceStoreError("append", a.persistenceId, error);
          },
        ),
      ),
    );
  }

  /** One statement for the whole batch; a single append that collides throws 23505. */
  private async writeBatch(
    batch: readonly PendingAppend[],
    on: pg.Pool | pg.PoolClient = this.pool,
  ): Promise<AppendOutcome[]> {
    const callIds: string[] = [];
    const callFirst: number[] = [];
    const ids: string[] = [];
    const seqs: number[] = [];
    const serializers: number[] = [];
    const payloads: Uint8Array[] = [];
    const tags: (string | null)[] = [];
    const timestamps: number[] = [];
    for (const a of batch) {
      callIds.push(a.persistenceId);
      callFirst.push(a.expectedSeqNr);
      let seq = a.expectedSeqNr;
      for (const e of a.events) {
        ids.push(a.persistenceId);
        seqs.push(seq++);
        serializers.push(e.serializerId);
        payloads.push(e.bytes);
        tags.push(e.tags === undefined || e.tags.length === 0 ? null : JSON.stringify(e.tags));
        timestamps.push(e.timestampMs);
      }
    }
    const r = await on.query<{ highest: string }>({
      ...this.sql.append,
      values: [callIds, callFirst, ids, seqs, serializers, payloads, tags, timestamps],
    });
    // Rows come back in the order of the input arrays (unnest WITH ORDINALITY, ORDER BY).
    return batch.map((a, i) => {
      const highest = Number(r.rows[i]?.highest);
      return a.expectedSeqNr === highest + 1
        ? undefined
        : new JournalConflictError(a.persistenceId, a.expectedSeqNr, highest);
    });
  }
}

function pgCode(error: unknown): unknown {
  return (error as { code?: unknown } | null)?.code;
}

/** A statement's text, and its name when it is sent as a named statement. */
interface Statement {
  readonly text: string;
  readonly name?: string;
}

/**
 * The statement for `text`: named `shardkit_<hash>_<hash>` (two hashes of the text) when
 * `named`. node-postgres prepares a named statement on a connection the first time it
 * runs there and refuses one name for two texts, hence a name derived from the whole
 * text (which holds the table prefix).
 */
function statementOf(text: string, named: boolean): Statement {
  if (!named) return { text };
  const h1 = murmur3OfString(text, 1) >>> 0;
  const h2 = murmur3OfString(text, 2) >>> 0;
  return { text, name: `shardkit_${h1.toString(36)}_${h2.toString(36)}` };
}

function statements(t: PostgresTables, named: boolean) {
  const texts = statementTexts(t);
  const out = {} as { [K in keyof typeof texts]: Statement };
  for (const k of Object.keys(texts) as (keyof typeof texts)[])
    out[k] = statementOf(texts[k], named);
  return out;
}

function statementTexts(t: PostgresTables) {
  const highestOf = (id: string) =>
    `GREATEST(COALESCE((SELECT max(sequence_nr) FROM ${t.journal} WHERE persistence_id = ${id}), 0),
              COALESCE((SELECT deleted_to FROM ${t.deleted} WHERE persistence_id = ${id}), 0))`;
  return {
    append: `
      WITH calls AS (
        SELECT c.pid, c.first_seq, c.ord, ${highestOf("c.pid")} AS highest
        FROM unnest($1::text[], $2::int8[]) WITH ORDINALITY AS c(pid, first_seq, ord)
      ), ins AS (
        INSERT INTO ${t.journal} (persistence_id, sequence_nr, serializer_id, payload, tags, timestamp_ms)
        SELECT r.pid, r.seq, r.ser, r.payload,
               CASE WHEN r.tags IS NULL THEN NULL
                    ELSE ARRAY(SELECT json_array_elements_text(r.tags::json)) END,
               r.ts
        FROM unnest($3::text[], $4::int8[], $5::int8[], $6::bytea[], $7::text[], $8::int8[])
               AS r(pid, seq, ser, payload, tags, ts)
        JOIN calls c ON c.pid = r.pid AND c.first_seq = c.highest + 1
        RETURNING 1
      )
      SELECT highest FROM calls ORDER BY ord`,
    read: `
      SELECT sequence_nr, serializer_id, payload, tags, timestamp_ms FROM ${t.journal}
      WHERE persistence_id = $1 AND sequence_nr >= $2 AND sequence_nr <= $3
      ORDER BY sequence_nr LIMIT $4`,
    highest: `SELECT ${highestOf("$1")} AS highest`,
    setFence: `
      INSERT INTO ${t.fence} AS f (fence_key, token) VALUES ($1, $2)
      ON CONFLICT (fence_key) DO UPDATE SET token = EXCLUDED.token WHERE f.token <= EXCLUDED.token
      RETURNING token`,
    getFence: `SELECT token FROM ${t.fence} WHERE fence_key = $1`,
    deleteTo: `
      WITH h AS (SELECT LEAST($2::int8, ${highestOf("$1")}) AS upto),
      del AS (
        DELETE FROM ${t.journal} WHERE persistence_id = $1 AND sequence_nr <= (SELECT upto FROM h)
      )
      INSERT INTO ${t.deleted} AS d (persistence_id, deleted_to)
      SELECT $1, upto FROM h WHERE upto > 0
      ON CONFLICT (persistence_id) DO UPDATE SET deleted_to = GREATEST(d.deleted_to, EXCLUDED.deleted_to)`,
  };
}
