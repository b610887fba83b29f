/**
 * Logger port: structured logging. Fields are plain data; the sink decides the format.
 */
export const LogLevels = ["debug", "info", "warn", "error", "off"] as const;
export type LogLevel = (typeof LogLevels)[number];

export type LogFields = Readonly<Record<string, unknown>>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  /** True when messages at `level` are emitted (to skip building costly fields). */
  isEnabled(level: LogLevel): boolean;
  /** A logger that adds `fields` to every record. */
  child(fields: LogFields): Logger;
}

/** Numeric rank of a level; higher is more severe. */
export function levelRank(level: LogLevel): number {
  return LogLevels.indexOf(level);
}
