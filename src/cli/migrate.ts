/**
 * `shardkit migrate --postgres <url> [--table-prefix shardkit_] [--connect-timeout-ms N]`
 *
 * Creates (idempotently) every PostgreSQL table shardkit uses for one prefix: the
 * journal and snapshot tables (`migratePostgres`, under its advisory lock) and the lease
 * table (`PostgresLeaseStore.ensureSchema`). Prints which tables it created and which
 * already existed. Arguments are checked before connecting (exit 2); connection and DDL
 * failures exit 1.
 */
import { parseArgs } from "node:util";
import type pg from "pg";
import { importPeerDependency } from "../persistence/peer-dependency.js";
import { DEFAULT_TABLE_PREFIX } from "../persistence/persistence-settings.js";
import {
  migratePostgres,
  PostgresLeaseStore,
  postgresTables,
} from "../persistence/postgres/index.js";
import { NodeClock } from "../runtime/node/node-clock.js";
import { NodeScheduler } from "../runtime/node/node-scheduler.js";
import {
  CliFailure,
  type CliIo,
  EXIT_OK,
  EXIT_RUNTIME,
  EXIT_USAGE,
  oneLine,
  parseConnectTimeoutArg,
  parseTablePrefixArg,
  UsageError,
} from "./io.js";

export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

export const MIGRATE_USAGE = `Usage: shardkit migrate --postgres <url> [options]

Creates or updates the PostgreSQL tables of shardkit (journal, journal_deleted,
snapshot, fence, lease) for one table prefix. Safe to run again and concurrently.

Options:
  --postgres <url>            postgres://user:password@host:port/database (required)
  --table-prefix <prefix>     table name prefix (default ${DEFAULT_TABLE_PREFIX}; lower-case
                              letters, digits and '_', at most 41, not starting with a digit)
  --connect-timeout-ms <ms>   give up connecting after this long (default ${DEFAULT_CONNECT_TIMEOUT_MS})
  -h, --help                  show this help`;

interface MigrateArgs {
  readonly url: string;
  readonly prefix: string;
  readonly connectTimeoutMs: number;
}

type Parsed = { readonly help: true } | { readonly help: false; readonly args: MigrateArgs };

function parse(argv: readonly string[]): Parsed {
  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: true,
      options: {
        postgres: { type: "string" },
        "table-prefix": { type: "string", default: DEFAULT_TABLE_PREFIX },
        "connect-timeout-ms": { type: "string", default: String(DEFAULT_CONNECT_TIMEOUT_MS) },
        help: { type: "boolean", short: "h", default: false },
      },
    }));
  } catch (error) {
    throw new UsageError(oneLine(error));
  }
  if (values.help === true) return { help: true };
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);

  const url = values.postgres;
  if (typeof url !== "string" || url === "") throw new UsageError("--postgres <url> is required");
  let parsedUrl: URL;
  try {
    parsedUrl = new URL(url);
  } catch {
    throw new UsageError(`--postgres is not a URL (expected postgres://user@host:port/database)`);
  }
  if (parsedUrl.protocol !== "postgres:" && parsedUrl.protocol !== "postgresql:")
    throw new UsageError(
      `--postgres must be a postgres:// or postgresql:// URL, not ${parsedUrl.protocol}//`,
    );

  const prefix = parseTablePrefixArg(values["table-prefix"] as string);
  const connectTimeoutMs = parseConnectTimeoutArg(values["connect-timeout-ms"] as string);

  return { help: false, args: { url, prefix, connectTimeoutMs } };
}

/** The URL with its password masked, for messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== "") u.password = "***";
    return u.toString();
  } catch {
    return "<invalid url>";
  }
}

export async function runMigrate(argv: readonly string[], io: CliIo): Promise<number> {
  let parsed: Parsed;
  try {
    parsed = parse(argv);
  } catch (error) {
    io.err(`shardkit migrate: ${oneLine(error)} (see shardkit migrate --help)`);
    return EXIT_USAGE;
  }
  if (parsed.help) {
    io.out(MIGRATE_USAGE);
    return EXIT_OK;
  }
  return migrate(parsed.args, io);
}

async function migrate(args: MigrateArgs, io: CliIo): Promise<number> {
  const where = redactUrl(args.url);
  let Pool: typeof pg.Pool;
  try {
    ({ Pool } = await importPeerDependency<typeof pg>("pg", "shardkit migrate"));
  } catch (error) {
    io.err(`shardkit migrate: ${oneLine(error)}`);
    return EXIT_RUNTIME;
  }
  const pool = new Pool({
    connectionString: args.url,
    connectionTimeoutMillis: args.connectTimeoutMs,
    max: 1,
  });
  // An idle client losing its connection emits on the pool; without a listener that
  // would crash the process instead of failing the step in progress.
  pool.on("error", () => {});
  const scheduler = new NodeScheduler({ unrefTimers: true });
  let step = `cannot connect to ${where}`;
  try {
    const client = await pool.connect();
    client.release();
    io.out(`connected to ${where}`);

    step = "migration failed";
    const tables = postgresTables(args.prefix);
    const leases = new PostgresLeaseStore({
      pool,
      tablePrefix: args.prefix,
      clock: new NodeClock(),
      scheduler,
    });
    const names = [tables.journal, tables.deleted, tables.snapshot, tables.fence, leases.table];
    const before = await existing(pool, names);
    await migratePostgres(pool, args.prefix);
    await leases.ensureSchema();
    const after = await existing(pool, names);

    for (const name of names) {
      if (!after.has(name)) throw new CliFailure(`table ${name} is missing after the migration`);
      io.out(`${before.has(name) ? "exists " : "created"} ${name}`);
    }
    const created = names.filter((n) => !before.has(n)).length;
    io.out(
      `schema for prefix ${args.prefix} is up to date (${created} created, ${names.length - created} already present)`,
    );
    return EXIT_OK;
  } catch (error) {
    const timeout = step.startsWith("cannot connect")
      ? ` (connect timeout ${args.connectTimeoutMs} ms)`
      : "";
    io.err(`shardkit migrate: ${step}: ${oneLine(error)}${timeout}`);
    return EXIT_RUNTIME;
  } finally {
    scheduler.dispose();
    await pool.end().catch(() => undefined);
  }
}

/** Which of `names` exist as tables visible on the search path. */
async function existing(pool: pg.Pool, names: readonly string[]): Promise<Set<string>> {
  const r = await pool.query<{ name: string }>(
    "SELECT n AS name FROM unnest($1::text[]) AS n WHERE to_regclass(n) IS NOT NULL",
    [names],
  );
  return new Set(r.rows.map((row) => row.name));
}
