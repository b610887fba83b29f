/**
 * The `shardkit` command as a child process (`tsx src/cli/main.ts ...`): help, unknown
 * command, argument errors (exit 2), an unreachable server (exit 1), and — when
 * SHARDKIT_PG_URL is set, else a visible SKIP line — a real migration with a prefix
 * unique to the run: tables created, a second run idempotent, tables dropped afterwards.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";
import pg from "pg";
import { afterAll, afterEach, describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const TSX = resolve(ROOT, "node_modules/.bin/tsx");
const MAIN = "src/cli/main.ts";
/** Generous: tsx start-up on a loaded machine. */
const RUN_TIMEOUT_MS = 20_000;
const PG_URL = process.env.SHARDKIT_PG_URL;

interface RunResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly elapsedMs: number;
}

const live = new Set<ChildProcess>();

function killGroup(child: ChildProcess): void {
  // detached: the child leads its own process group, so this also reaches the node
  // process that the tsx wrapper starts.
  if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

function runCli(args: readonly string[]): Promise<RunResult> {
  const started = performance.now();
  const child = spawn(TSX, [MAIN, ...args], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  live.add(child);
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  return new Promise((resolveRun, reject) => {
    const timer = setTimeout(() => {
      killGroup(child);
      reject(
        new Error(`shardkit ${args.join(" ")} did not exit in ${RUN_TIMEOUT_MS} ms\n${stderr}`),
      );
    }, RUN_TIMEOUT_MS);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      live.delete(child);
      resolveRun({ code, stdout, stderr, elapsedMs: performance.now() - started });
    });
  });
}

afterEach(() => {
  for (const child of live) killGroup(child);
  live.clear();
});

describe("shardkit CLI", () => {
  it("--help prints the usage and exits 0", async () => {
    const r = await runCli(["--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Usage: shardkit <command>");
    expect(r.stdout).toContain("migrate");
  });

  it("migrate --help prints the options and exits 0", async () => {
    const r = await runCli(["migrate", "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("--postgres <url>");
    expect(r.stdout).toContain("--connect-timeout-ms");
  });

  it("an unknown subcommand prints the usage and exits 2", async () => {
    const r = await runCli(["frobnicate"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown command "frobnicate"');
    expect(r.stderr).toContain("Usage: shardkit <command>");
  });

  it("remove-sharding-data without arguments exits 2 naming the missing --type", async () => {
    const r = await runCli(["remove-sharding-data"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--type <name> is required");
  });

  it("migrate with an invalid prefix exits 2 naming the prefix, without connecting", async () => {
    const r = await runCli([
      "migrate",
      "--postgres",
      "postgres://postgres@127.0.0.1:1/test",
      "--table-prefix",
      "Bad-Prefix",
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('invalid --table-prefix "Bad-Prefix"');
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("migrate with a bad URL, an unknown option or no --postgres exits 2", async () => {
    const bad = await runCli(["migrate", "--postgres", "not a url"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--postgres is not a URL");
    const http = await runCli(["migrate", "--postgres", "http://localhost/x"]);
    expect(http.code).toBe(2);
    expect(http.stderr).toContain("postgres://");
    const unknown = await runCli(["migrate", "--postgres", "postgres://h/d", "--bogus"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("--bogus");
    const missing = await runCli(["migrate"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("--postgres <url> is required");
    const timeout = await runCli([
      "migrate",
      "--postgres",
      "postgres://h/d",
      "--connect-timeout-ms",
      "0",
    ]);
    expect(timeout.code).toBe(2);
    expect(timeout.stderr).toContain("--connect-timeout-ms");
  });

  it("migrate against an unreachable server exits 1 within the connect timeout", async () => {
    const connectTimeoutMs = 3_000;
    const r = await runCli([
      "migrate",
      "--postgres",
      "postgres://postgres@127.0.0.1:1/test",
      "--connect-timeout-ms",
      String(connectTimeoutMs),
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("cannot connect to postgres://postgres@127.0.0.1:1/test");
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    // start-up of tsx + the connect attempt; the attempt itself is bounded by the timeout
    expect(r.elapsedMs).toBeLessThan(connectTimeoutMs + 10_000);
  });
});

if (PG_URL === undefined) {
  // A visible skip, not an assertion-free pass: the line on stdout and a skipped test in
  // the report.
  console.log("SKIP shardkit migrate against PostgreSQL: SHARDKIT_PG_URL is not set");
  describe("shardkit migrate (PostgreSQL)", () => {
    it.skip("creates the journal, snapshot and lease tables, and is idempotent (needs SHARDKIT_PG_URL)", () => {});
  });
} else {
  const url = PG_URL;
  const prefix = `shardkit_clitest_${process.pid}_`;
  const tables = ["journal", "journal_deleted", "snapshot", "fence", "lease"].map(
    (t) => `${prefix}${t}`,
  );
  const pool = new pg.Pool({ connectionString: url, max: 2 });

  afterAll(async () => {
    try {
      await pool.query(`DROP TABLE IF EXISTS ${tables.join(", ")}`);
    } finally {
      await pool.end();
    }
  });

  async function presentTables(): Promise<string[]> {
    const r = await pool.query<{ name: string }>(
      "SELECT n AS name FROM unnest($1::text[]) AS n WHERE to_regclass(n) IS NOT NULL ORDER BY n",
      [tables],
    );
    return r.rows.map((row) => row.name);
  }

  describe("shardkit migrate (PostgreSQL)", () => {
    it("creates the journal, snapshot and lease tables, and is idempotent", async () => {
      expect(await presentTables()).toEqual([]);

      const first = await runCli(["migrate", "--postgres", url, "--table-prefix", prefix]);
      expect(first.stderr).toBe("");
      expect(first.code).toBe(0);
      for (const t of tables) expect(first.stdout).toContain(`created ${t}`);
      expect(first.stdout).toContain("5 created, 0 already present");
      expect(await presentTables()).toEqual([...tables].sort());

      // the tables are usable: the columns the plugins rely on exist
      const cols = await pool.query<{ table_name: string; column_name: string }>(
        `SELECT table_name, column_name FROM information_schema.columns
          WHERE table_name = ANY($1::text[])`,
        [tables],
      );
      const has = (t: string, c: string) =>
        cols.rows.some((r) => r.table_name === `${prefix}${t}` && r.column_name === c);
      expect(has("journal", "sequence_nr")).toBe(true);
      expect(has("journal_deleted", "deleted_to")).toBe(true);
      expect(has("snapshot", "payload")).toBe(true);
      expect(has("lease", "expires_at")).toBe(true);
      expect(has("lease", "token")).toBe(true);
      expect(has("fence", "token")).toBe(true);

      await pool.query(
        `INSERT INTO ${prefix}journal VALUES ('p-1', 1, 7, '\\x01'::bytea, NULL, 0)`,
      );
      const second = await runCli(["migrate", "--postgres", url, "--table-prefix", prefix]);
      expect(second.stderr).toBe("");
      expect(second.code).toBe(0);
      for (const t of tables) expect(second.stdout).toContain(`exists  ${t}`);
      expect(second.stdout).toContain("0 created, 5 already present");
      // data survives a re-run
      const rows = await pool.query(`SELECT count(*)::int AS n FROM ${prefix}journal`);
      expect(rows.rows[0]).toEqual({ n: 1 });
    });
  });
}
