/**
 * `shardkit remove-sharding-data`, run in-process through runCli against a real SQLite
 * file and (when SHARDKIT_PG_URL is set, else a visible SKIP line) a real PostgreSQL:
 * usage errors exit 2 without touching anything; the refusal while a member answers;
 * the deletion removes exactly the sharding data of the named types and keeps the
 * entities' own events and other types' data.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/cli.js";
import { JournalCoordinatorStore } from "../../src/cluster/sharding/coordinator-store.js";
import { JournalRememberEntitiesStore } from "../../src/cluster/sharding/journal-remember-entities-store.js";
import {
  coordinatorPersistenceId,
  rememberPersistenceId,
} from "../../src/cluster/sharding/sharding-store-codec.js";
import { postgresPersistence } from "../../src/persistence/postgres/postgres-persistence.js";
import { sqlitePersistence } from "../../src/persistence/sqlite/sqlite-persistence.js";
import type { Journal } from "../../src/ports/journal.js";
import type { SnapshotStore } from "../../src/ports/snapshot-store.js";

async function cli(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

/** Writes coordinator state and remembered entities of `type`, and one entity event. */
async function seed(journal: Journal, snapshots: SnapshotStore, type: string): Promise<void> {
  const coord = new JournalCoordinatorStore(journal, snapshots, type, () => 1);
  await coord.load();
  await coord.persist([{ type: "shard-region-registered", region: "r1", member: "m1" }]);
  await coord.persist([{ type: "shard-home-allocated", shard: "3", region: "r1" }]);
  await coord.saveSnapshot({
    regions: [{ region: "r1", member: "m1", shards: ["3"] }],
    proxies: [],
    unallocatedShards: [],
  });
  await coord.persist([{ type: "shard-home-allocated", shard: "4", region: "r1" }]);
  const remember = new JournalRememberEntitiesStore(journal, snapshots, () => 1);
  for (const shard of ["3", "4", "10"])
    await remember.update(type, shard, { started: [`e${shard}`], stopped: [] });
  await journal.append(`${type}|e3`, 1, [
    { serializerId: 1, bytes: new Uint8Array([1]), timestampMs: 1 },
  ]);
}

async function counts(journal: Journal, type: string) {
  const pids = [
    coordinatorPersistenceId(type),
    ...["3", "4", "10"].map((s) => rememberPersistenceId(type, s)),
  ];
  const sharding = await Promise.all(pids.map((p) => journal.read(p, 1, 1_000)));
  return {
    shardingEvents: sharding.reduce((n, l) => n + l.length, 0),
    entityEvents: (await journal.read(`${type}|e3`, 1, 10)).length,
  };
}

describe("shardkit remove-sharding-data: arguments", () => {
  it.each([
    [["--journal", "sqlite:/tmp/x.db", "--force"], "--type <name> is required"],
    [["--type", "A", "--force"], "--journal sqlite:<path> or --journal postgres://... is required"],
    [
      ["--type", "A", "--journal", "mysql://x", "--force"],
      "--journal must be sqlite:<path> or a postgres:// URL",
    ],
    [["--type", "A", "--journal", "sqlite:/tmp/x.db"], "--addresses"],
    [["--type", "a/b", "--journal", "sqlite:/tmp/x.db", "--force"], 'invalid --type "a/b"'],
    [
      ["--type", "A", "--journal", "sqlite:/tmp/x.db", "--addresses", "nohost"],
      'invalid address "nohost"',
    ],
    [
      ["--type", "A", "--journal", "sqlite:/tmp/x.db", "--force", "--connect-timeout-ms", "0"],
      "--connect-timeout-ms",
    ],
  ])("%j exits 2: %s", async (args, message) => {
    const r = await cli(["remove-sharding-data", ...args]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(message);
  });

  it("--help prints the usage", async () => {
    const r = await cli(["remove-sharding-data", "--help"]);
    expect(r.code).toBe(0);
    expect(r.out).toContain("Usage: shardkit remove-sharding-data");
  });
});

describe("shardkit remove-sharding-data on SQLite", () => {
  let dir: string;
  let path: string;
  let server: Server;
  let livePort: number;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "shardkit-rsd-"));
    path = join(dir, "store.db");
    const p = sqlitePersistence({ path });
    await seed(p.journal, p.snapshots, "Cart");
    await seed(p.journal, p.snapshots, "User");
    await p.close();
    server = createServer((s) => s.destroy());
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    livePort = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  it("refuses (exit 1) while a member answers on --addresses, deleting nothing", async () => {
    const r = await cli([
      "remove-sharding-data",
      "--type",
      "Cart",
      "--journal",
      `sqlite:${path}`,
      "--addresses",
      `127.0.0.1:${livePort}`,
    ]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`a cluster member answers on 127.0.0.1:${livePort}`);
    const p = sqlitePersistence({ path });
    expect((await counts(p.journal, "Cart")).shardingEvents).toBeGreaterThan(0);
    await p.close();
  });

  it("deletes only the named type's sharding data once no member answers", async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const deadPort = (closed.address() as { port: number }).port;
    await new Promise((r) => closed.close(r));
    const r = await cli([
      "remove-sharding-data",
      "--type",
      "Cart",
      "--journal",
      `sqlite:${path}`,
      "--addresses",
      `127.0.0.1:${deadPort}`,
    ]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toContain("removed sharding data of Cart: 4 persistence ids");
    const p = sqlitePersistence({ path });
    expect(await counts(p.journal, "Cart")).toEqual({ shardingEvents: 0, entityEvents: 1 });
    expect((await counts(p.journal, "User")).shardingEvents).toBeGreaterThan(0);
    expect(await p.snapshots.loadLatest(coordinatorPersistenceId("Cart"))).toBeUndefined();
    expect(await p.snapshots.loadLatest(coordinatorPersistenceId("User"))).toBeDefined();
    // A coordinator starting afresh finds nothing and starts at sequence number 1.
    expect(await p.journal.highestSequenceNr(coordinatorPersistenceId("Cart"))).toBe(0);
    await p.close();
  });

  it("fails with exit 1 on a missing database file", async () => {
    const r = await cli([
      "remove-sharding-data",
      "--type",
      "Cart",
      "--journal",
      `sqlite:${dir}/nope.db`,
      "--force",
    ]);
    expect(r.code).toBe(1);
    expect(r.err).toContain("no such database file");
  });
});

const PG_URL = process.env.SHARDKIT_PG_URL;
if (!PG_URL) console.log("SKIP remove-sharding-data on PostgreSQL: SHARDKIT_PG_URL is not set");
describe.runIf(PG_URL)("shardkit remove-sharding-data on PostgreSQL", () => {
  const prefix = `shardkit_rsd_${process.pid}_`;
  let pool: pg.Pool;
  beforeAll(() => {
    pool = new pg.Pool({ connectionString: PG_URL, max: 4 });
  });
  afterAll(async () => {
    await pool.query(
      `DROP TABLE IF EXISTS ${prefix}journal, ${prefix}journal_deleted, ${prefix}snapshot`,
    );
    await pool.end();
  });

  it("deletes only the named type's sharding data", async () => {
    const p = postgresPersistence({ pool, tablePrefix: prefix });
    await seed(p.journal, p.snapshots, "Cart");
    await seed(p.journal, p.snapshots, "User");
    const r = await cli([
      "remove-sharding-data",
      "--type",
      "Cart",
      "--journal",
      PG_URL as string,
      "--table-prefix",
      prefix,
      "--force",
    ]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toContain("removed sharding data of Cart: 4 persistence ids");
    expect(await counts(p.journal, "Cart")).toEqual({ shardingEvents: 0, entityEvents: 1 });
    expect((await counts(p.journal, "User")).shardingEvents).toBeGreaterThan(0);
    await p.close();
  });
});
