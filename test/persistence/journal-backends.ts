/**
 * The three persistence backends the contract suites run against: memory, SQLite (a
 * temp file per test file, removed in teardown) and PostgreSQL (only when
 * SHARDKIT_PG_URL is set, else a visible SKIP line; a table prefix unique to the run,
 * tables dropped in teardown).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import type { GroupCommitStats } from "../../src/persistence/group-committer.js";
import { MemoryJournal } from "../../src/persistence/memory/memory-journal.js";
import { MemorySnapshotStore } from "../../src/persistence/memory/memory-snapshot-store.js";
import type { JournalSettings } from "../../src/persistence/persistence-settings.js";
import { postgresPersistence } from "../../src/persistence/postgres/postgres-persistence.js";
import { sqlitePersistence } from "../../src/persistence/sqlite/sqlite-persistence.js";
import type { Journal } from "../../src/ports/journal.js";
import type { SnapshotStore } from "../../src/ports/snapshot-store.js";

/** Small bounds so the suites reach them quickly. */
export const testJournalSettings: Partial<JournalSettings> = {
  readBatchMax: 50,
  batchEventsMax: 500,
  batchBytesMax: 8 * 1024 * 1024,
  queuedEventsMax: 20_000,
};

/** One opened store: a journal and snapshot store sharing storage. */
export interface Opened {
  readonly journal: Journal;
  readonly snapshots: SnapshotStore;
  /** Group-commit counters, for the plugins that batch. */
  readonly stats?: () => GroupCommitStats;
  close(): Promise<void>;
}

export interface Backend {
  readonly name: string;
  /**
   * Opens a store. Every call of one backend sees the same data (another node's
   * connection to the same database) — except memory, whose data lives in the object,
   * so its "other node" is the same instance.
   */
  open(): Opened;
  /** PostgreSQL only: a raw pool on the same database, and the table prefix. */
  readonly pg?: { pool: pg.Pool; prefix: string };
  teardown(): Promise<void>;
}

function memoryBackend(): Backend {
  const journal = new MemoryJournal({ journal: testJournalSettings });
  const snapshots = new MemorySnapshotStore();
  return {
    name: "memory",
    open: () => ({ journal, snapshots, close: async () => undefined }),
    teardown: () => journal.close(),
  };
}

function sqliteBackend(): Backend {
  const dir = mkdtempSync(join(tmpdir(), "shardkit-sqlite-"));
  const path = join(dir, "test.db");
  const opened: { close(): Promise<void> }[] = [];
  return {
    name: "sqlite",
    open: () => {
      const p = sqlitePersistence({ path, journal: testJournalSettings });
      opened.push(p);
      return {
        journal: p.journal,
        snapshots: p.snapshots,
        stats: () => p.journal.stats(),
        close: () => p.close(),
      };
    },
    teardown: async () => {
      for (const p of opened) await p.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function postgresBackend(url: string, tag: string, namedStatements: boolean): Backend {
  const pool = new pg.Pool({ connectionString: url, max: 8 });
  const prefix = `shardkit_test_${process.pid}_${tag}_`;
  const opened: { close(): Promise<void> }[] = [];
  return {
    name: "postgres",
    pg: { pool, prefix },
    open: () => {
      const p = postgresPersistence({
        pool,
        tablePrefix: prefix,
        namedStatements,
        journal: testJournalSettings,
      });
      opened.push(p);
      return {
        journal: p.journal,
        snapshots: p.snapshots,
        stats: () => p.journal.stats(),
        close: () => p.close(),
      };
    },
    teardown: async () => {
      for (const p of opened) await p.close();
      await pool.query(
        `DROP TABLE IF EXISTS ${prefix}journal, ${prefix}journal_deleted, ${prefix}snapshot`,
      );
      await pool.end();
    },
  };
}

/**
 * The backends to run; `tag` keeps the PostgreSQL tables of different test files
 * apart. Logs a SKIP line when PostgreSQL is not configured. With `unnamedToo`,
 * PostgreSQL runs a second time with `namedStatements: false` (both ways of sending the
 * journal's statements must behave the same).
 */
export function persistenceBackends(
  tag: string,
  { unnamedToo = false }: { readonly unnamedToo?: boolean } = {},
): [string, () => Backend][] {
  const list: [string, () => Backend][] = [
    ["memory", memoryBackend],
    ["sqlite", sqliteBackend],
  ];
  const url = process.env.SHARDKIT_PG_URL;
  if (url) {
    list.push(["postgres", () => postgresBackend(url, tag, true)]);
    if (unnamedToo)
      list.push([
        "postgres (unnamed statements)",
        () => postgresBackend(url, `${tag}_unnamed`, false),
      ]);
  } else console.log(`SKIP postgres ${tag} contract: SHARDKIT_PG_URL is not set`);
  return list;
}
