/** What the subcommands share: where they write, exit codes, error formatting, arguments. */
import { ConfigError, ShardkitError } from "../base/errors.js";
import { validateTablePrefix } from "../persistence/persistence-settings.js";

export const EXIT_OK = 0;
/** Runtime failure: database unreachable, DDL refused. */
export const EXIT_RUNTIME = 1;
/** Usage error: unknown command or option, bad value. */
export const EXIT_USAGE = 2;

/** Where the CLI writes; one call per line. */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
}

/** The message of anything thrown, on one line. */
export function oneLine(error: unknown): string {
  const text = error instanceof Error ? error.message || error.name : String(error);
  return text.replace(/\s*\n\s*/g, " ").trim();
}

/** A bad command line: the subcommand prints it with a pointer to --help and exits 2. */
export class UsageError extends ShardkitError {
  constructor(message: string) {
    super("CLI_USAGE", message);
  }
}

/** A command failed while running (not a usage error): printed, exit code 1. */
export class CliFailure extends ShardkitError {
  constructor(message: string) {
    super("CLI_FAILED", message);
  }
}

/** The value of --table-prefix, validated like the plugins do. @throws UsageError */
export function parseTablePrefixArg(raw: string): string {
  try {
    return validateTablePrefix(raw, "--table-prefix");
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    throw new UsageError(`invalid --table-prefix "${raw}": expected ${error.allowed}`);
  }
}

/** Most ms a --connect-timeout-ms may ask for. */
export const CONNECT_TIMEOUT_MS_MAX = 600_000;

/** The value of --connect-timeout-ms: an integer 1 .. 600000. @throws UsageError */
export function parseConnectTimeoutArg(raw: string): number {
  const ms = Number(raw);
  if (!/^\d+$/.test(raw) || ms < 1 || ms > CONNECT_TIMEOUT_MS_MAX)
    throw new UsageError(
      `invalid --connect-timeout-ms "${raw}": expected an integer 1 .. ${CONNECT_TIMEOUT_MS_MAX}`,
    );
  return ms;
}
