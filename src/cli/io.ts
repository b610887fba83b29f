/** What the subcommands share: where they write, exit codes, error formatting. */

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
