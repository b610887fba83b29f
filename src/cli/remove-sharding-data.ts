/**
 * `shardkit remove-sharding-data --type <name>... --journal sqlite:<path>|postgres:<url>
 *   [--table-prefix p] [--addresses host:port,...] [--force] [--connect-timeout-ms N]`
 *
 * Deletes sharding's internal data of the given entity types: the coordinator state
 * (`/sharding/<type>/coordinator`) and every shard's remembered entities
 * (`/sharding/<type>/shard/<id>`): events, deletion marks and snapshots. The entities' own
 * events (`<type>|<id>`) are not touched. Use it when a cluster must start its sharding
 * from scratch, e.g. after the coordinator state no longer matches the code.
 *
 * Safety: the data must not be deleted under a running cluster. Before deleting, the tool
 * tries to connect to every `--addresses` entry (the cluster's members, e.g. its seed
 * nodes) and refuses (exit 1) when one answers, unless --force. Without --addresses it
 * refuses too, unless --force: it cannot check. Arguments are checked before anything is
 * opened (exit 2).
 */
import { existsSync } from "node:fs";
import { connect } from "node:net";
import { parseArgs } from "node:util";
import type pg from "pg";
import {
  coordinatorPersistenceId,
  rememberPersistenceIdPrefix,
} from "../cluster/sharding/sharding-store-codec.js";
import { importPeerDependency } from "../persistence/peer-dependency.js";
import type { PersistenceIdMatch, RemovedRows } from "../persistence/persistence-admin.js";
import { DEFAULT_TABLE_PREFIX } from "../persistence/persistence-settings.js";
import { deletePersistenceIdsPostgres } from "../persistence/postgres/postgres-admin.js";
import { postgresTables } from "../persistence/postgres/postgres-schema.js";
import { deletePersistenceIdsSqlite } from "../persistence/sqlite/sqlite-admin.js";
import { sqliteTables } from "../persistence/sqlite/sqlite-schema.js";
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
import { redactUrl } from "./migrate.js";

export const REMOVE_CONNECT_TIMEOUT_MS_DEFAULT = 2_000;

export const REMOVE_SHARDING_DATA_USAGE = `Usage: shardkit remove-sharding-data --type <name>... --journal <store> [options]

Deletes the internal sharding data (coordinator state, remembered entities) of the
given entity types. The entities' own events are kept. Stop the cluster first.

Options:
  --type <name>               entity type name; repeat for several types (required)
  --journal <store>           sqlite:<path> or postgres://user@host:port/db (required)
  --table-prefix <prefix>     table name prefix (default ${DEFAULT_TABLE_PREFIX})
  --addresses <list>          host:port of cluster members, comma separated; the tool
                              refuses to run while one of them answers
  --force                     run without the liveness check (or despite it)
  --connect-timeout-ms <ms>   per address / database connect timeout (default ${REMOVE_CONNECT_TIMEOUT_MS_DEFAULT})
  -h, --help                  show this help`;

type Store =
  | { readonly kind: "sqlite"; readonly path: string }
  | { readonly kind: "postgres"; readonly url: string };

interface RemoveArgs {
  readonly types: readonly string[];
  readonly store: Store;
  readonly prefix: string;
  readonly addresses: readonly { host: string; port: number }[];
  readonly force: boolean;
  readonly connectTimeoutMs: number;
}

const TYPE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

function parse(argv: readonly string[]): RemoveArgs | "help" {
  let values: Record<string, string | boolean | string[] | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: true,
      options: {
        type: { type: "string", multiple: true },
        journal: { type: "string" },
        "table-prefix": { type: "string", default: DEFAULT_TABLE_PREFIX },
        addresses: { type: "string" },
        force: { type: "boolean", default: false },
        "connect-timeout-ms": {
          type: "string",
          default: String(REMOVE_CONNECT_TIMEOUT_MS_DEFAULT),
        },
        help: { type: "boolean", short: "h", default: false },
      },
    }));
  } catch (error) {
    throw new UsageError(oneLine(error));
  }
  if (values.help === true) return "help";
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const types = (values.type as string[] | undefined) ?? [];
  if (types.length === 0) throw new UsageError("--type <name> is required");
  for (const t of types)
    if (!TYPE_NAME.test(t))
      throw new UsageError(`invalid --type "${t}": letters, digits, '_', '.', '-'`);
  const store = parseStore(values.journal as string | undefined);
  const prefix = parseTablePrefixArg(values["table-prefix"] as string);
  const connectTimeoutMs = parseConnectTimeoutArg(values["connect-timeout-ms"] as string);
  const addresses = parseAddresses(values.addresses as string | undefined);
  const force = values.force === true;
  if (addresses.length === 0 && !force)
    throw new UsageError(
      "give the cluster's --addresses (the tool checks that no member runs) or --force",
    );
  return { types, store, prefix, addresses, force, connectTimeoutMs };
}

function parseStore(raw: string | undefined): Store {
  if (raw === undefined || raw === "")
    throw new UsageError("--journal sqlite:<path> or --journal postgres://... is required");
  if (raw.startsWith("sqlite:")) {
    const path = raw.slice("sqlite:".length);
    if (path === "") throw new UsageError("--journal sqlite:<path> needs a path");
    return { kind: "sqlite", path };
  }
  const url = raw.startsWith("postgres:") && !raw.startsWith("postgres://") ? raw.slice(9) : raw;
  if (url.startsWith("postgres://") || url.startsWith("postgresql://")) {
    try {
      new URL(url);
    } catch {
      throw new UsageError("--journal postgres URL is not a URL");
    }
    return { kind: "postgres", url };
  }
  throw new UsageError(`--journal must be sqlite:<path> or a postgres:// URL, got "${raw}"`);
}

function parseAddresses(raw: string | undefined): { host: string; port: number }[] {
  if (raw === undefined || raw.trim() === "") return [];
  return raw.split(",").map((part) => {
    const s = part.trim();
    const colon = s.lastIndexOf(":");
    const host = s.slice(0, colon).replace(/^\[|\]$/g, "");
    const port = Number(s.slice(colon + 1));
    if (colon <= 0 || !Number.isInteger(port) || port < 1 || port > 65_535)
      throw new UsageError(`invalid address "${s}" in --addresses: expected host:port`);
    return { host, port };
  });
}

/** True when something accepts a TCP connection at host:port within timeoutMs. */
function answers(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

/** The persistenceIds of the sharding data of `types`. */
export function shardingDataMatch(types: readonly string[]): PersistenceIdMatch {
  return {
    exact: types.map(coordinatorPersistenceId),
    prefixes: types.map(rememberPersistenceIdPrefix),
  };
}

export async function runRemoveShardingData(argv: readonly string[], io: CliIo): Promise<number> {
  let args: RemoveArgs | "help";
  try {
    args = parse(argv);
  } catch (error) {
    io.err(`shardkit remove-sharding-data: ${oneLine(error)} (see --help)`);
    return EXIT_USAGE;
  }
  if (args === "help") {
    io.out(REMOVE_SHARDING_DATA_USAGE);
    return EXIT_OK;
  }
  const running: string[] = [];
  for (const a of args.addresses)
    if (await answers(a.host, a.port, args.connectTimeoutMs)) running.push(`${a.host}:${a.port}`);
  if (running.length > 0) {
    if (!args.force) {
      io.err(
        `shardkit remove-sharding-data: refusing: a cluster member answers on ${running.join(", ")}; stop the cluster first (or --force)`,
      );
      return EXIT_RUNTIME;
    }
    io.err(`warning: --force: deleting although ${running.join(", ")} answers`);
  }
  const match = shardingDataMatch(args.types);
  try {
    const removed = await remove(args.store, args.prefix, match, args.connectTimeoutMs);
    io.out(
      `removed sharding data of ${args.types.join(", ")}: ${removed.persistenceIds} persistence ids, ${removed.events} events, ${removed.snapshots} snapshots`,
    );
    return EXIT_OK;
  } catch (error) {
    const where = args.store.kind === "sqlite" ? args.store.path : redactUrl(args.store.url);
    io.err(`shardkit remove-sharding-data: failed on ${where}: ${oneLine(error)}`);
    return EXIT_RUNTIME;
  }
}

async function remove(
  store: Store,
  prefix: string,
  match: PersistenceIdMatch,
  connectTimeoutMs: number,
): Promise<RemovedRows> {
  if (store.kind === "sqlite") {
    if (!existsSync(store.path)) throw new CliFailure("no such database file");
    const { openSqliteDatabase } = await import("../persistence/sqlite/sqlite-driver.js");
    const db = openSqliteDatabase(store.path, { fileMustExist: true, timeout: connectTimeoutMs });
    try {
      return deletePersistenceIdsSqlite(db, sqliteTables(prefix), match);
    } finally {
      db.close();
    }
  }
  const { Pool } = await importPeerDependency<typeof pg>("pg", "a postgres:// store");
  const pool = new Pool({
    connectionString: store.url,
    connectionTimeoutMillis: connectTimeoutMs,
    max: 1,
  });
  pool.on("error", () => {});
  try {
    return await deletePersistenceIdsPostgres(pool, postgresTables(prefix), match);
  } finally {
    await pool.end().catch(() => undefined);
  }
}
