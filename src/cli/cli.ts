/**
 * `shardkit <command> [options]`: dispatch to the subcommands.
 *
 * Exit codes: 0 success (and --help), 1 runtime failure (database or management API
 * unreachable, DDL refused, request refused), 2 usage error (unknown command or option,
 * bad value), 3 `ready`: the node is not ready. Every error is one line on stderr,
 * prefixed with the command.
 */
import { type CliIo, EXIT_OK, EXIT_USAGE } from "./io.js";
import { CLUSTER_COMMANDS, type ClusterCommand, runClusterCommand } from "./management-client.js";
import { runMigrate } from "./migrate.js";
import { runRemoveShardingData } from "./remove-sharding-data.js";

export type { CliIo } from "./io.js";

export const USAGE = `Usage: shardkit <command> [options]

Commands on a running node (management API, see "shardkit members --help"):
  members               the cluster's members
  shards <type>         regions, shards and entity counts of an entity type
  entity <type> <id>    where an entity lives
  leave <address>       make a member leave gracefully
  down <address>        mark a member down
  ready                 the node's readiness

Commands on the database:
  migrate               create or update the PostgreSQL schema (journal, snapshots, leases)
  remove-sharding-data  delete the sharding data (coordinator state, remembered entities) of entity types

Run "shardkit <command> --help" for the options of a command.
Exit codes: 0 ok, 1 runtime failure, 2 usage error, 3 not ready (ready).`;

export async function runCli(
  argv: readonly string[],
  io: CliIo,
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<number> {
  const [command, ...rest] = argv;
  if (CLUSTER_COMMANDS.includes(command as ClusterCommand))
    return runClusterCommand(command as ClusterCommand, rest, io, env);
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
