/**
 * `node --import tsx bench/persistence-floor.ts [sqlite] [pg] [pg-journal]`: what the stores cost
 * below shardkit, for reading the persisted proxy figures (docs/persistence.md,
 * "Throughput and durability"). Not a bench group: it prints lines, no metrics.
 *
 * - sqlite: the group-commit transaction of SqliteJournal by hand (better-sqlite3, WAL,
 *   `synchronous = NORMAL`), on a fresh file holding 10 events of each of 10 000 ids:
 *   batches of 16 appends to random ids, each `BEGIN IMMEDIATE`, per append the
 *   highest-sequence-number query and the insert, `COMMIT`; mean µs per part, once
 *   alone and once with a second connection committing one row between batches (as the
 *   other member does: its commit makes this connection drop its page cache).
 * - pg (SHARDKIT_PG_URL): the server's commit bound on this machine: 1, 2, 4 and 8
 *   connections, each inserting 16 rows per autocommit statement (one `unnest` INSERT,
 *   no conflict check) into a scratch table, with `synchronous_commit` on and off; rows
 *   per second, statement latency p50 and the client's CPU per statement.
 * - pg-journal (SHARDKIT_PG_URL): PostgresJournal itself as the proxy bench's members use
 *   it, without the cluster: 2 journals (pool max 8 each, default settings), each with 32
 *   writers appending one event at a time to their own ids and awaiting it; events per
 *   second, append latency p50, events per batch.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { postgresPersistence } from "../src/persistence/postgres/postgres-persistence.js";
import { migratePostgres, postgresTables } from "../src/persistence/postgres/postgres-schema.js";
import { migrateSqlite } from "../src/persistence/sqlite/sqlite-schema.js";

const IDS = 10_000;
const EVENTS_PER_ID = 10;
const BATCH = 16;
const SQLITE_BATCHES = 3_000;
const PG_MS = 3_000;
const PAYLOAD = Buffer.from('{"d":1}');
const pid = (i: number) => `Counter|counter-${i}`;

function sqliteFloor(withOther: boolean): void {
  const dir = mkdtempSync(join(tmpdir(), "shardkit-floor-"));
  try {
    const path = join(dir, "floor.db");
    const db = new Database(path);
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma("wal_autocheckpoint = 10000");
    const t = migrateSqlite(db, "shardkit_");
    const insertSql = `INSERT INTO ${t.journal} (persistence_id, sequence_nr, serializer_id, payload, tags, timestamp_ms) VALUES (?, ?, ?, ?, ?, ?)`;
    const insert = db.prepare(insertSql);
    const highest = db
      .prepare<[string, string], number>(
        `SELECT max(coalesce((SELECT max(sequence_nr) FROM ${t.journal} WHERE persistence_id = ?), 0),
                    coalesce((SELECT deleted_to FROM ${t.deleted} WHERE persistence_id = ?), 0))`,
      )
      .pluck();
    db.transaction(() => {
      for (let n = 1; n <= EVENTS_PER_ID; n++)
        for (let i = 0; i < IDS; i++) insert.run(pid(i), n, 101, PAYLOAD, null, 0);
    })();
    db.pragma("wal_checkpoint(TRUNCATE)");
    const other = new Database(path);
    other.pragma("synchronous = NORMAL");
    const otherInsert = other.prepare(insertSql);
    const begin = db.prepare("BEGIN IMMEDIATE");
    const commit = db.prepare("COMMIT");
    const us = { begin: 0, highest: 0, insert: 0, commit: 0 };
    const cpu0 = process.cpuUsage();
    for (let b = 0; b < SQLITE_BATCHES; b++) {
      if (withOther) otherInsert.run("other", b + 1, 101, PAYLOAD, null, 0);
      const t0 = performance.now();
      begin.run();
      const t1 = performance.now();
      for (let k = 0; k < BATCH; k++) {
        const id = pid(Math.floor(Math.random() * IDS));
        const a = performance.now();
        const h = highest.get(id, id) as number;
        const c = performance.now();
        insert.run(id, h + 1, 101, PAYLOAD, null, 0);
        us.highest += (c - a) * 1000;
        us.insert += (performance.now() - c) * 1000;
      }
      const t2 = performance.now();
      commit.run();
      us.begin += (t1 - t0) * 1000;
      us.commit += (performance.now() - t2) * 1000;
      // the checkpointer's work, off the measured parts
      if (b % 30 === 29) db.pragma("wal_checkpoint(PASSIVE)");
    }
    const cpu = process.cpuUsage(cpu0);
    const per = (x: number) => (x / SQLITE_BATCHES).toFixed(0);
    const total = us.begin + us.highest + us.insert + us.commit;
    process.stdout.write(
      `sqlite batch of ${BATCH}${withOther ? ", another connection committing between batches" : ", alone"}: ` +
        `begin ${per(us.begin)} µs, highest ${per(us.highest)}, insert ${per(us.insert)}, commit ${per(us.commit)}, ` +
        `total ${per(total)} µs = ${(total / SQLITE_BATCHES / BATCH).toFixed(1)} µs/event; ` +
        `process CPU ${((cpu.user + cpu.system) / (SQLITE_BATCHES * BATCH)).toFixed(1)} µs/event\n`,
    );
    other.close();
    db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function pgFloor(url: string): Promise<void> {
  const table = `shardkit_floor_${process.pid}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(
      `CREATE TABLE ${table} (persistence_id text NOT NULL, sequence_nr bigint NOT NULL,
         serializer_id bigint NOT NULL, payload bytea NOT NULL, tags text[],
         timestamp_ms bigint NOT NULL, PRIMARY KEY (persistence_id, sequence_nr))`,
    );
    let seq = 0;
    for (const connections of [1, 2, 4, 8])
      for (const synchronousCommit of ["on", "off"]) {
        const clients = await Promise.all(
          Array.from({ length: connections }, async () => {
            const c = new pg.Client({ connectionString: url });
            await c.connect();
            await c.query(`SET synchronous_commit = ${synchronousCommit}`);
            return c;
          }),
        );
        let statements = 0;
        const latency: number[] = [];
        const end = performance.now() + PG_MS;
        const cpu0 = process.cpuUsage();
        await Promise.all(
          clients.map(async (c, ci) => {
            while (performance.now() < end) {
              const ids: string[] = [];
              const seqs: number[] = [];
              for (let i = 0; i < BATCH; i++) {
                ids.push(`Counter|c-${ci}-${i}`);
                seqs.push(++seq);
              }
              const t0 = performance.now();
              await c.query(
                `INSERT INTO ${table}
                 SELECT id, s, 101, $3::bytea, NULL, 0 FROM unnest($1::text[], $2::int8[]) AS u(id, s)`,
                [ids, seqs, PAYLOAD],
              );
              latency.push(performance.now() - t0);
              statements++;
            }
          }),
        );
        const cpu = process.cpuUsage(cpu0);
        await Promise.all(clients.map((c) => c.end()));
        latency.sort((a, b) => a - b);
        const p50 = latency[Math.floor(latency.length / 2)] ?? 0;
        process.stdout.write(
          `pg ${connections} connection(s), synchronous_commit=${synchronousCommit}, ${BATCH} rows per statement: ` +
            `${((statements * BATCH) / (PG_MS / 1000)).toFixed(0)} rows/s, p50 ${p50.toFixed(2)} ms, ` +
            `client CPU ${((cpu.user + cpu.system) / statements).toFixed(0)} µs/statement\n`,
        );
      }
  } finally {
    await admin.query(`DROP TABLE IF EXISTS ${table}`);
    await admin.end();
  }
}

async function pgJournalFloor(url: string): Promise<void> {
  const tablePrefix = `shardkit_floor_${process.pid}_`;
  const admin = new pg.Pool({ connectionString: url, max: 1 });
  await migratePostgres(admin, tablePrefix);
  const pools = [0, 1].map(() => new pg.Pool({ connectionString: url, max: 8 }));
  try {
    const journals = pools.map(
      (pool) => postgresPersistence({ pool, tablePrefix, createSchema: false }).journal,
    );
    const writers = 32;
    const latency: number[] = [];
    let events = 0;
    const event = { serializerId: 101, bytes: PAYLOAD, timestampMs: 0 };
    const seqs = new Map<string, number>();
    const runFor = async (ms: number, measure: boolean) => {
      const end = performance.now() + ms;
      await Promise.all(
        journals.flatMap((journal, j) =>
          Array.from({ length: writers }, async (_, w) => {
            while (performance.now() < end) {
              const id = `Counter|j${j}-w${w}-${Math.floor(Math.random() * 150)}`;
              const next = (seqs.get(id) ?? 0) + 1; // fresh tables: every id starts at 0
              const t0 = performance.now();
              await journal.append(id, next, [event]);
              seqs.set(id, next);
              if (measure) {
                latency.push(performance.now() - t0);
                events++;
              }
            }
          }),
        ),
      );
    };
    await runFor(1_000, false);
    const before = journals.map((j) => j.stats());
    await runFor(PG_MS, true);
    const after = journals.map((j) => j.stats());
    const batches = after.reduce((a, s, i) => a + s.batches - (before[i]?.batches ?? 0), 0);
    latency.sort((a, b) => a - b);
    const p50 = latency[Math.floor(latency.length / 2)] ?? 0;
    process.stdout.write(
      `pg journal, 2 x ${writers} writers: ${(events / (PG_MS / 1000)).toFixed(0)} events/s, ` +
        `append p50 ${p50.toFixed(2)} ms, ${(events / Math.max(1, batches)).toFixed(1)} events/batch\n`,
    );
  } finally {
    await Promise.all(pools.map((p) => p.end()));
    await admin.query(
      `DROP TABLE IF EXISTS ${Object.values(postgresTables(tablePrefix)).join(", ")}`,
    );
    await admin.end();
  }
}

const args = process.argv.slice(2);
const all = args.length === 0;
if (all || args.includes("sqlite")) {
  sqliteFloor(false);
  sqliteFloor(true);
}
if (all || args.includes("pg")) {
  const url = process.env.SHARDKIT_PG_URL;
  if (url === undefined || url === "")
    process.stdout.write("SKIP pg: SHARDKIT_PG_URL is not set\n");
  else await pgFloor(url);
}
if (all || args.includes("pg-journal")) {
  const url = process.env.SHARDKIT_PG_URL;
  if (url === undefined || url === "")
    process.stdout.write("SKIP pg-journal: SHARDKIT_PG_URL is not set\n");
  else await pgJournalFloor(url);
}
