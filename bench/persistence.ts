/**
 * Journal benchmarks (real databases, one process): 1 000 entities write concurrently,
 * each persisting one ~100-byte event at a time (await, then the next), as event-sourced
 * entities do; group commit turns that into a few large batches.
 * - persistence.sqlite.events.throughput / persistence.pg.events.throughput: events/s;
 * - persistence.sqlite.persist.p99.ms / persistence.pg.persist.p99.ms: append latency.
 * SQLite uses a temp file (synchronous=FULL, the default). PostgreSQL runs only when
 * SHARDKIT_PG_URL is set (else a SKIP line), on tables with a unique prefix, dropped after.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import type { GroupCommitStats } from "../src/persistence/group-committer.js";
import { postgresPersistence } from "../src/persistence/postgres/postgres-persistence.js";
import { sqlitePersistence } from "../src/persistence/sqlite/sqlite-persistence.js";
import type { Journal, JournalEvent } from "../src/ports/journal.js";
import { type BenchGroup, median, percentile, repeat } from "./harness.js";

const ENTITIES = 1_000;
const RUN_MS = 2_000;
const payload = new Uint8Array(100).fill(7);

interface RunResult {
  readonly throughput: number;
  readonly p99Ms: number;
}

/** Every entity appends one event at a time for RUN_MS; `run` distinguishes runs' ids. */
async function drive(journal: Journal, run: number): Promise<RunResult> {
  const latencies: number[] = [];
  let events = 0;
  const t0 = performance.now();
  const deadline = t0 + RUN_MS;
  const entity = async (i: number) => {
    const id = `bench-${run}-${i}`;
    for (let seq = 1; performance.now() < deadline; seq++) {
      const event: JournalEvent = { serializerId: 1, bytes: payload, timestampMs: Date.now() };
      const start = performance.now();
      await journal.append(id, seq, [event]);
      latencies.push(performance.now() - start);
      events++;
    }
  };
  await Promise.all(Array.from({ length: ENTITIES }, (_, i) => entity(i)));
  const seconds = (performance.now() - t0) / 1000;
  return { throughput: events / seconds, p99Ms: percentile(latencies, 99) };
}

async function measure(
  journal: Journal & { stats(): GroupCommitStats },
): Promise<{ throughput: number; p99Ms: number; batchEvents: number }> {
  let run = 0;
  const before = journal.stats();
  const results: RunResult[] = [];
  await repeat(3, 1, async () => {
    const r = await drive(journal, run++);
    if (run > 1) results.push(r);
    return r.throughput;
  });
  const after = journal.stats();
  return {
    throughput: median(results.map((r) => r.throughput)),
    p99Ms: median(results.map((r) => r.p99Ms)),
    batchEvents: (after.events - before.events) / Math.max(1, after.batches - before.batches),
  };
}

async function sqliteBench(report: Parameters<BenchGroup["run"]>[0]): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "shardkit-bench-"));
  const p = sqlitePersistence({ path: join(dir, "bench.db") });
  try {
    const m = await measure(p.journal);
    const note = `${ENTITIES} entities, synchronous=${p.settings.synchronous}, ~${Math.round(m.batchEvents)} events/batch`;
    report({
      metric: "persistence.sqlite.events.throughput",
      value: m.throughput,
      unit: "events/s",
      note,
    });
    report({
      metric: "persistence.sqlite.persist.p99.ms",
      value: m.p99Ms,
      unit: "ms",
      note: "append latency",
    });
  } finally {
    await p.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function pgBench(report: Parameters<BenchGroup["run"]>[0], url: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: url, max: 8 });
  const prefix = `shardkit_bench_${process.pid}_`;
  const p = postgresPersistence({ pool, tablePrefix: prefix });
  try {
    const m = await measure(p.journal);
    const note = `${ENTITIES} entities, ~${Math.round(m.batchEvents)} events/batch`;
    report({
      metric: "persistence.pg.events.throughput",
      value: m.throughput,
      unit: "events/s",
      note,
    });
    report({
      metric: "persistence.pg.persist.p99.ms",
      value: m.p99Ms,
      unit: "ms",
      note: "append latency",
    });
  } finally {
    await p.close();
    await pool.query(
      `DROP TABLE IF EXISTS ${prefix}journal, ${prefix}journal_deleted, ${prefix}snapshot`,
    );
    await pool.end();
  }
}

export const persistenceGroup: BenchGroup = {
  name: "persistence",
  description: "journal group commit: 1 000 entities persisting concurrently",
  async run(report) {
    await sqliteBench(report);
    const url = process.env.SHARDKIT_PG_URL;
    if (url) await pgBench(report, url);
    else process.stdout.write("SKIP persistence.pg.*: SHARDKIT_PG_URL is not set\n");
  },
};
