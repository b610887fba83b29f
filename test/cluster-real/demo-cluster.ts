/**
 * Test-side handle of the `npm start` demo node (examples/sharding-demo/node.ts) for the
 * persistence tests with real processes: event-sourced accounts sharded over a cluster,
 * on a shared SQLite file or a PostgreSQL database. Every wait is bounded; the child
 * harness kills leftovers (installChildTeardown in each test file).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { type Child, request, spawnNode, waitFor } from "../support/child-process.js";
import { freePorts } from "./cluster-node.js";

/** Start-up (tsx compile + join) on a loaded 2-core machine. */
export const DEMO_START_TIMEOUT_MS = 40_000;
export const DEMO_COMMAND_TIMEOUT_MS = 20_000;

/** Where the accounts live. */
export type DemoStore =
  | {
      readonly kind: "sqlite";
      readonly db: string;
      /** Sharding's own state in Distributed Data, durable in this directory (one file a member). */
      readonly ddataDir?: string;
    }
  | { readonly kind: "postgres"; readonly url: string; readonly prefix: string };

export interface DemoCluster {
  readonly ports: readonly number[];
  readonly seedNodes: readonly string[];
  readonly store: DemoStore;
  readonly remember: boolean;
  readonly accounts: number;
  /** Shard leases with fencing tokens (examples/sharding-demo/node.ts `leases`). */
  readonly leases?: boolean;
}

export async function demoCluster(
  store: DemoStore,
  options: { accounts: number; remember?: boolean; size?: number; leases?: boolean },
): Promise<DemoCluster> {
  const ports = await freePorts(options.size ?? 3);
  return {
    ports,
    seedNodes: ports.map((p) => `127.0.0.1:${p}`),
    store,
    remember: options.remember ?? false,
    accounts: options.accounts,
    leases: options.leases ?? false,
  };
}

/** Starts member `index` of the cluster (again, after a crash: same port, same store). */
export function startDemoNode(c: DemoCluster, index: number, logLevel = "warn"): Child {
  const port = c.ports[index] as number;
  const config = {
    name: `n${index}`,
    port,
    seedNodes: c.seedNodes,
    accounts: c.accounts,
    db: c.store.kind === "sqlite" ? c.store.db : "",
    ...(c.store.kind === "postgres" ? { pgUrl: c.store.url, pgTablePrefix: c.store.prefix } : {}),
    ...(c.store.kind === "sqlite" && c.store.ddataDir !== undefined
      ? { ddataDir: c.store.ddataDir }
      : {}),
    remember: c.remember,
    leases: c.leases === true,
  };
  return spawnNode("examples/sharding-demo/node.ts", [JSON.stringify(config)], {
    name: `n${index}:${port}`,
    env: { SHARDKIT_LOG_LEVEL: logLevel },
  });
}

export async function waitUp(nodes: readonly Child[]): Promise<void> {
  await Promise.all(
    nodes.map((n) => waitFor(n, (e) => e.event === "up", DEMO_START_TIMEOUT_MS, "member Up")),
  );
}

/** Waits until every member is Up and the coordinator has registered `regions` regions. */
export async function waitRegions(nodes: readonly Child[], regions = nodes.length): Promise<void> {
  await waitUp(nodes);
  const t0 = Date.now();
  for (;;) {
    const r = await cmd(nodes[0] as Child, { cmd: "regions" }).catch(() => undefined);
    if (Number(r?.regions) >= regions) return;
    if (Date.now() - t0 > DEMO_START_TIMEOUT_MS)
      throw new Error(`only ${String(r?.regions)} of ${regions} regions registered`);
    await new Promise((done) => setTimeout(done, 200));
  }
}

export function cmd(
  node: Child,
  command: Readonly<Record<string, unknown>>,
  timeoutMs = DEMO_COMMAND_TIMEOUT_MS,
) {
  return request(node, command, timeoutMs);
}

/** Per account persistence id: event count and lowest / highest sequence number. */
export interface SeqRange {
  readonly count: number;
  readonly min: number;
  readonly max: number;
}

/** Reads the accounts' journal rows straight from the database. */
export async function accountSequences(store: DemoStore): Promise<Map<string, SeqRange>> {
  const q = (table: string) =>
    `SELECT persistence_id AS pid, count(*) AS count, min(sequence_nr) AS min, max(sequence_nr) AS max
     FROM ${table} WHERE persistence_id LIKE 'Account|%' GROUP BY persistence_id`;
  type Row = { pid: string; count: number | string; min: number | string; max: number | string };
  let rows: Row[];
  if (store.kind === "sqlite") {
    const Database = (await import("better-sqlite3")).default;
    const db = new Database(store.db, { readonly: true, fileMustExist: true });
    try {
      rows = db.prepare(q("shardkit_journal")).all() as Row[];
    } finally {
      db.close();
    }
  } else {
    const pool = new pg.Pool({ connectionString: store.url, max: 1 });
    try {
      rows = (await pool.query<Row>(q(`${store.prefix}journal`))).rows;
    } finally {
      await pool.end();
    }
  }
  return new Map(
    rows.map((r) => [r.pid, { count: Number(r.count), min: Number(r.min), max: Number(r.max) }]),
  );
}

/**
 * The stores a persistence test runs on: a SQLite file in a temp dir, and PostgreSQL when
 * SHARDKIT_PG_URL is set (else a visible SKIP line naming `label`). `cleanup` removes the
 * files and drops the tables; call it in afterAll.
 */
export function demoStores(
  label: string,
  tag: string,
  options: {
    ddata?: boolean;
    /** Only the SQLite stores, or only PostgreSQL (one file per backend). Default both. */
    only?: "sqlite" | "postgres";
  } = {},
): { stores: [string, () => DemoStore][]; cleanup: () => Promise<void> } {
  const dirs: string[] = [];
  const url = process.env.SHARDKIT_PG_URL;
  const prefix = `shardkit_${tag}_${process.pid}_`;
  const stores: [string, () => DemoStore][] = [
    [
      "sqlite",
      () => {
        const dir = mkdtempSync(join(tmpdir(), `shardkit-${tag}-`));
        dirs.push(dir);
        return { kind: "sqlite", db: join(dir, "accounts.db") };
      },
    ],
  ];
  if (options.ddata)
    stores.push([
      "sqlite, sharding state in ddata",
      () => {
        const dir = mkdtempSync(join(tmpdir(), `shardkit-${tag}-`));
        dirs.push(dir);
        return { kind: "sqlite", db: join(dir, "accounts.db"), ddataDir: dir };
      },
    ]);
  if (options.only === "postgres") stores.length = 0;
  if (options.only !== "sqlite") {
    if (url) stores.push(["postgres", () => ({ kind: "postgres", url, prefix })]);
    else console.log(`SKIP ${label} on PostgreSQL: SHARDKIT_PG_URL is not set`);
  }
  return {
    stores,
    cleanup: async () => {
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
      if (url) await dropPostgresTables(url, prefix);
    },
  };
}

/** Drops the PostgreSQL tables of `prefix` (test teardown). */
export async function dropPostgresTables(url: string, prefix: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  try {
    await pool.query(
      `DROP TABLE IF EXISTS ${prefix}journal, ${prefix}journal_deleted, ${prefix}snapshot, ${prefix}fence, ${prefix}lease`,
    );
  } finally {
    await pool.end();
  }
}
