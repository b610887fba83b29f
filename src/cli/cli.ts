/**
 * `shardkit <command> [options]`: dispatch to the subcommands.
 *
 * Exit codes: 0 success (and --help), 1 runtime failure (database unreachable, DDL
 * refused), 2 usage error (unknown command or option, bad value). Every error is one
 * line on stderr, prefixed with the command.
 */
import { type CliIo, EXIT_OK, EXIT_USAGE } from "./io.js";
import { runMigrate } from "./migrate.js";
import { runRemoveShardingData } from "./remove-sharding-data.js";

export type { CliIo } from "./io.js";

export const USAGE = `Usage: shardkit <command> [options]

Commands:
  migrate               create or update the PostgreSQL schema (journal, snapshots, leases)
  remove-sharding-data  delete the sharding data (coordinator state, remembered entities) of entity types

Run "shardkit <command> --help" for the options of a command.
Exit codes: 0 ok, 1 runtime failure, 2 usage error.`;

export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case undefined:
      io.err(USAGE);
      return EXIT_USAGE;
    case "-h":
    case "--help":
    case "help":
      io.out(USAGE);
      return EXIT_OK;
    case "migrate":
      return runMigrate(rest, io);
    case "remove-sharding-data":
      return runRemoveShardingData(rest, io);
    default:
      io.err(`shardkit: unknown command "${command}"`);
      io.err(USAGE);
      return EXIT_USAGE;
  }
}
