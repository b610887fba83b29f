/**
 * `namedStatements` of the PostgreSQL journal (docs/persistence.md, "PostgreSQL: named
 * statements"): with it (the default) each pooled connection prepares the journal's
 * statements once and then only executes them; without it no statement is prepared.
 * Read from the server's own view of the session (`pg_prepared_statements`) through a
 * pool of one connection, so the test sees the session the journal used. Runs only with
 * SHARDKIT_PG_URL set (otherwise a visible SKIP line and skipped tests). The contract
 * suite runs both ways (journal.contract.test.ts).
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/base/errors.js";
import { PostgresJournal } from "../../src/persistence/postgres/postgres-journal.js";
import { postgresTables } from "../../src/persistence/postgres/postgres-schema.js";
import { resolvePostgresSettings } from "../../src/persistence/postgres/postgres-settings.js";

const pgUrl = process.env.SHARDKIT_PG_URL;
if (!pgUrl) console.log("SKIP postgres named statements: SHARDKIT_PG_URL is not set");

const ev = (text: string) => ({
  serializerId: 1,
  bytes: new TextEncoder().encode(text),
  timestampMs: 1_700_000_000_000,
});

interface Prepared {
  readonly name: string;
  readonly statement: string;
  readonly executions: number;
}

describe("postgres namedStatements setting", () => {
  it("is on by default and must be a boolean", () => {
    expect(resolvePostgresSettings().namedStatements).toBe(true);
    expect(() => resolvePostgresSettings({ namedStatements: "yes" as unknown as boolean })).toThrow(
      ConfigError,
    );
    expect(() => resolvePostgresSettings({ namedStatements: "yes" as unknown as boolean })).toThrow(
      /postgres\.namedStatements/,
    );
  });
});

describe.skipIf(!pgUrl)("postgres journal: named statements", { timeout: 20_000 }, () => {
  const prefixA = `shardkit_named_${process.pid}_a_`;
  const prefixB = `shardkit_named_${process.pid}_b_`;
  let pool: pg.Pool;

  /** The shardkit statements prepared in the pool's only session. */
  async function prepared(): Promise<Prepared[]> {
    const r = await pool.query<{ name: string; statement: string; executions: string }>(
      `SELECT name, statement, (generic_plans + custom_plans)::text AS executions
       FROM pg_prepared_statements WHERE name LIKE 'shardkit\\_%' ORDER BY name`,
    );
    return r.rows.map((row) => ({ ...row, executions: Number(row.executions) }));
  }

  beforeAll(() => {
    pool = new pg.Pool({ connectionString: pgUrl, max: 1 });
  });
  afterAll(async () => {
    if (pool === undefined) return;
    const tables = [
      ...Object.values(postgresTables(prefixA)),
      ...Object.values(postgresTables(prefixB)),
    ];
    await pool.query(`DROP TABLE IF EXISTS ${tables.join(", ")}`);
    await pool.end();
  });

  it("prepares each statement once per connection and runs it again by name; two table prefixes never share a name", async () => {
    const a = new PostgresJournal({ pool, tablePrefix: prefixA });
    const b = new PostgresJournal({ pool, tablePrefix: prefixB });
    try {
      for (let seq = 1; seq <= 6; seq++) {
        await a.append("p-1", seq, [ev(`a${seq}`)]);
        await b.append("p-1", seq, [ev(`b${seq}`)]);
      }
      expect(await a.highestSequenceNr("p-1")).toBe(6);
      expect((await a.read("p-1", 1, 6)).map((e) => new TextDecoder().decode(e.bytes))).toEqual([
        "a1",
        "a2",
        "a3",
        "a4",
        "a5",
        "a6",
      ]);
      expect((await b.read("p-1", 1, 6)).map((e) => new TextDecoder().decode(e.bytes))).toEqual([
        "b1",
        "b2",
        "b3",
        "b4",
        "b5",
        "b6",
      ]);
      const statements = await prepared();
      const appends = statements.filter((s) => s.statement.includes("WITH calls AS"));
      // one append statement per table prefix, each prepared once and executed 6 times
      expect(appends).toHaveLength(2);
      expect(appends.some((s) => s.statement.includes(`${prefixA}journal`))).toBe(true);
      expect(appends.some((s) => s.statement.includes(`${prefixB}journal`))).toBe(true);
      expect(appends.map((s) => s.executions)).toEqual([6, 6]);
      const reads = statements.filter((s) => s.statement.includes("ORDER BY sequence_nr LIMIT"));
      expect(reads).toHaveLength(2);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("with namedStatements false prepares nothing and writes the same", async () => {
    await pool.query("DEALLOCATE ALL");
    // node-postgres remembers what it prepared on the connection: a fresh pool
    await pool.end();
    pool = new pg.Pool({ connectionString: pgUrl, max: 1 });
    const j = new PostgresJournal({ pool, tablePrefix: prefixA, namedStatements: false });
    try {
      await j.append("p-2", 1, [ev("x1")]);
      await j.append("p-2", 2, [ev("x2")]);
      expect(await j.highestSequenceNr("p-2")).toBe(2);
      expect((await j.read("p-2", 1, 2)).length).toBe(2);
      expect(await prepared()).toEqual([]);
    } finally {
      await j.close();
    }
  });
});
