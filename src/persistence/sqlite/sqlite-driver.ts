/**
 * The better-sqlite3 driver, loaded as an optional peer dependency: importing
 * `shardkit/sqlite` without it installed fails with `MissingPeerDependencyError`.
 */
import type BetterSqlite3 from "better-sqlite3";
import { importPeerDependency } from "../peer-dependency.js";

const Driver = await importPeerDependency<typeof BetterSqlite3>(
  "better-sqlite3",
  "shardkit/sqlite",
);

/** Opens (or creates) a database file with better-sqlite3. */
export function openSqliteDatabase(
  path: string,
  options: BetterSqlite3.Options,
): BetterSqlite3.Database {
  return new Driver(path, options);
}
