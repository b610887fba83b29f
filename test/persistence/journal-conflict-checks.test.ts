/**
 * Conflict-check details of the journals not pinned by the contract suite
 * (journal.contract.test.ts): a constraint violation of a single append is a store
 * failure, not a conflict (only a batch is split to find the offender), a closed
 * memory journal says so, and — on PostgreSQL, only with SHARDKIT_PG_URL set (otherwise a
 * visible SKIP line and skipped tests) — writers racing between the pre-check and the
 * insert of a batch, of a lone append and of a fenced append, and store failures inside
 * and outside the per-append split.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryJournal } from "../../src/persistence/memory/memory-journal.js";
import { PostgresJournal } from "../../src/persistence/postgres/postgres-journal.js";
import { postgresTables } from "../../src/persistence/postgres/postgres-schema.js";
import { sqlitePersistence } from "../../src/persistence/sqlite/sqlite-persistence.js";
import {
  JournalConflictError,
  JournalRejectedError,
  PersistenceStoreError,
} from "../../src/ports/journal.js";

const ev = (text: string) => ({
  serializerId: 1,
  bytes: new TextEncoder().encode(text),
  timestampMs: 1_700_000_000_000,
});

const outcome = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => "ok",
    (e: unknown) => e,
  );

/** Error class, persistence id and (store errors) operation of an outcome, for one assertion. */
function described(o: unknown): string {
  if (o instanceof JournalConflictError) return `conflict ${o.persistenceId}@${o.seqNr}`;
  if (o instanceof PersistenceStoreError)
    return `store-error ${o.operation} ${(o.fields as { persistenceId?: string }).persistenceId}`;
  return String(o);
}

describe("journal conflict checks", { timeout: 20_000 }, () => {
  it("sqlite: in a split batch, an append failing for another reason than a constraint is a store error of its append", async () => {
    const dir = mkdtempSync(join(tmpdir(), "shardkit-sqlite-"));
    const p = sqlitePersistence({ path: join(dir, "split-store-error.db") });
    try {
      // 'clash' stands in for a primary-key violation (it splits the batch); 'broken' fails
      // at run time with a plain error (malformed JSON), not a constraint
      p.db.exec(`CREATE TRIGGER clash BEFORE INSERT ON shardkit_journal
        WHEN NEW.persistence_id = 'clash' BEGIN SELECT RAISE(ABORT, 'clash'); END`);
      p.db.exec(`CREATE TRIGGER broken BEFORE INSERT ON shardkit_journal
        WHEN NEW.persistence_id = 'broken' BEGIN SELECT json('{broken'); END`);
      const outcomes = await Promise.all([
        outcome(p.journal.append("clash", 1, [ev("c")])),
        outcome(p.journal.append("broken", 1, [ev("b")])),
        outcome(p.journal.append("fine", 1, [ev("f")])),
      ]);
      expect(outcomes.map(described)).toEqual([
        "conflict clash@1",
        "store-error append broken",
        "ok",
      ]);
      expect(p.journal.stats()).toMatchObject({ batches: 1, appends: 3 });
      expect(await p.journal.highestSequenceNr("fine")).toBe(1);
      expect(await p.journal.highestSequenceNr("broken")).toBe(0);
    } finally {
      await p.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("sqlite: a constraint violation of an append alone is a store failure, not a conflict", async () => {
    const dir = mkdtempSync(join(tmpdir(), "shardkit-sqlite-"));
    const p = sqlitePersistence({ path: join(dir, "poison-alone.db") });
    try {
      // a trigger stands in for the (otherwise impossible) primary-key violation
      p.db.exec(`CREATE TRIGGER poison BEFORE INSERT ON shardkit_journal
        WHEN NEW.persistence_id = 'poison' BEGIN SELECT RAISE(ABORT, 'poisoned'); END`);
      const error = await p.journal.append("poison", 1, [ev("p")]).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(Error);
      expect(error).not.toBeInstanceOf(JournalConflictError);
      expect(String(error)).toMatch(/poisoned/);
      expect(p.journal.stats()).toMatchObject({ batches: 1, appends: 1 });
      expect(await p.journal.highestSequenceNr("poison")).toBe(0);
    } finally {
      await p.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("memory: an append to a closed journal is rejected as closed, saying so", async () => {
    const j = new MemoryJournal();
    await j.close();
    const error = await j.append("a", 1, [ev("x")]).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(JournalRejectedError);
    expect((error as JournalRejectedError).message).toMatch(/journal is closed/);
  });
});

const pgUrl = process.env.SHARDKIT_PG_URL;
if (!pgUrl) console.log("SKIP postgres journal conflict races: SHARDKIT_PG_URL is not set");

describe.skipIf(!pgUrl)(
  "postgres journal: writers racing the pre-check",
  { timeout: 20_000 },
  () => {
    const prefix = `shardkit_conflict_${process.pid}_`;
    const tables = postgresTables(prefix);
    let pool: pg.Pool;
    let n = 0;
    const uid = (what: string) => `${what}-${n++}`;
    const open = (on: pg.Pool = pool) =>
      new PostgresJournal({ pool: on, tablePrefix: prefix, batchesInFlightMax: 1 });

    beforeAll(async () => {
      pool = new pg.Pool({ connectionString: pgUrl, max: 10 });
      const j = open();
      await j.highestSequenceNr("schema"); // creates the tables
      await j.close();
      // Fails every statement that writes an event of an id starting with 'poison', after
      // its rows are in: a store failure that is not a unique violation.
      await pool.query(`
      CREATE OR REPLACE FUNCTION ${prefix}poison() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM new_rows WHERE persistence_id LIKE 'poison%') THEN
          RAISE EXCEPTION 'poisoned';
        END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER poison AFTER INSERT ON ${tables.journal}
        REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${prefix}poison();`);
    });
    afterAll(async () => {
      if (pool === undefined) return;
      await pool.query(
        `DROP TABLE IF EXISTS ${Object.values(tables).join(", ")}; DROP FUNCTION IF EXISTS ${prefix}poison()`,
      );
      await pool.end();
    });

    /** Another node's writer: event 1 of `id` inserted in a transaction left open. */
    async function racer(id: string): Promise<{ xid: string; commit(): Promise<void> }> {
      const client = await pool.connect();
      await client.query("BEGIN");
      await client.query(
        `INSERT INTO ${tables.journal} (persistence_id, sequence_nr, serializer_id, payload, timestamp_ms)
       VALUES ($1, 1, 1, '\\x00', 0)`,
        [id],
      );
      const r = await client.query<{ xid: string }>("SELECT pg_current_xact_id()::text AS xid");
      return {
        xid: r.rows[0]?.xid as string,
        commit: async () => {
          try {
            await client.query("COMMIT");
          } finally {
            client.release();
          }
        },
      };
    }

    /** Waits until an insert blocks on one of the racers' open transactions; returns that racer. */
    async function blockedOn<R extends { xid: string }>(...racers: R[]): Promise<R> {
      for (let i = 0; i < 400; i++) {
        const r = await pool.query<{ xid: string }>(
          "SELECT transactionid::text AS xid FROM pg_locks WHERE locktype = 'transactionid' AND NOT granted",
        );
        const hit = racers.find((x) => r.rows.some((row) => row.xid === x.xid));
        if (hit !== undefined) return hit;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error("no insert blocked on a racing writer");
    }

    it("a batch of several appends raced twice (before the batch and inside its split): only the colliding appends conflict", async () => {
      const journal = open();
      const [r1, r2, poison, fine] = [uid("raced"), uid("raced"), uid("poison"), uid("fine")];
      const first = await racer(r1);
      const second = await racer(r2);
      try {
        // one batch (one batch slot, same event-loop turn)
        const pending = [
          outcome(journal.append(r1, 1, [ev("loser")])),
          outcome(journal.append(r2, 1, [ev("loser")])),
          outcome(journal.append(poison, 1, [ev("p")])),
          outcome(journal.append(fine, 1, [ev("ok")])),
        ];
        // The batch statement blocks on one racer; its commit makes the statement fail with
        // a unique violation, and the batch is written again one append per statement.
        const early = await blockedOn(first, second);
        await early.commit();
        // The other racer's row is still invisible to the split's pre-check of its append:
        // that insert blocks, and fails with a unique violation when the racer commits.
        const late = early === first ? second : first;
        await blockedOn(late);
        await late.commit();
        expect((await Promise.all(pending)).map(described)).toEqual([
          `conflict ${r1}@1`,
          `conflict ${r2}@1`,
          `store-error append ${poison}`,
          "ok",
        ]);
        expect(journal.stats()).toMatchObject({ batches: 1, appends: 4 });
        expect(await journal.highestSequenceNr(fine)).toBe(1);
        expect(await journal.highestSequenceNr(poison)).toBe(0);
      } finally {
        await journal.close();
      }
    });

    it("a lone append raced between its pre-check and its insert is a conflict", async () => {
      const journal = open();
      const id = uid("lone");
      const other = await racer(id);
      try {
        const pending = outcome(journal.append(id, 1, [ev("loser")]));
        await (await blockedOn(other)).commit();
        expect(described(await pending)).toBe(`conflict ${id}@1`);
        expect(await journal.highestSequenceNr(id)).toBe(1);
      } finally {
        await journal.close();
      }
    });

    it("a fenced append raced by another writer is a conflict, its transaction rolled back so the connection serves the next append", async () => {
      // one connection: a transaction left open would fail the next append
      const single = new pg.Pool({ connectionString: pgUrl, max: 1 });
      const journal = open(single);
      const id = uid("fenced");
      const fence = { key: `T/${id}`, token: 1 };
      const other = await racer(id);
      try {
        const pending = outcome(journal.append(id, 1, [ev("loser")], fence));
        await (await blockedOn(other)).commit();
        expect(described(await pending)).toBe(`conflict ${id}@1`);
        await expect(journal.append(id, 2, [ev("next")], fence)).resolves.toBeUndefined();
        expect(await journal.highestSequenceNr(id)).toBe(2);
      } finally {
        await journal.close();
        await single.end();
      }
    });

    it("a fenced append failing for another reason than a unique violation is a store error of the append", async () => {
      const journal = open();
      const id = uid("poison-fenced");
      try {
        const o = await outcome(journal.append(id, 1, [ev("p")], { key: `T/${id}`, token: 1 }));
        expect(described(o)).toBe(`store-error append ${id}`);
        expect(String(o)).toMatch(/poisoned/);
        expect(await journal.highestSequenceNr(id)).toBe(0);
      } finally {
        await journal.close();
      }
    });

    it("a batch statement failing for another reason than a unique violation fails every append of the batch, writes none and is not a conflict", async () => {
      const journal = open();
      const [poison, innocent] = [uid("poison"), uid("innocent")];
      try {
        const lone = await outcome(journal.append(poison, 1, [ev("p")]));
        expect(described(lone)).toBe(`store-error append ${poison}`);
        const both = await Promise.all([
          outcome(journal.append(poison, 1, [ev("p")])),
          outcome(journal.append(innocent, 1, [ev("i")])),
        ]);
        expect(both.map(described)).toEqual([
          `store-error append ${poison}`,
          `store-error append ${innocent}`,
        ]);
        expect(journal.stats()).toMatchObject({ batches: 2, appends: 3 });
        expect(await journal.highestSequenceNr(innocent)).toBe(0);
      } finally {
        await journal.close();
      }
    });

    it("a batch of several appends is written by one statement", async () => {
      let statements = 0;
      const counting = new Proxy(pool, {
        get(target, key) {
          if (key === "query")
            return (...args: Parameters<pg.Pool["query"]>) => {
              statements++;
              return (target.query as (...a: unknown[]) => unknown)(...args);
            };
          const v = Reflect.get(target, key) as unknown;
          return typeof v === "function" ? v.bind(target) : v;
        },
      });
      const journal = open(counting);
      const ids = [uid("one"), uid("two"), uid("three")];
      try {
        await journal.highestSequenceNr(ids[0] as string); // the schema check is done
        statements = 0;
        await Promise.all(ids.map((id) => journal.append(id, 1, [ev(id)])));
        expect(journal.stats()).toMatchObject({ batches: 1, appends: 3 });
        expect(statements).toBe(1);
      } finally {
        await journal.close();
      }
    });
  },
);
