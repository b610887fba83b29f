/**
 * The real Logger: one line per record on stderr, as text or JSON lines.
 *
 * The threshold comes from the `level` option (default "info"); the environment
 * variable SHARDKIT_LOG_LEVEL overrides it when set to a valid level, so operators can
 * turn on debug logging without a code change. SHARDKIT_LOG_FORMAT (`json`, or `pretty`
 * / `text` for the human-readable line) overrides the format the same way. Child loggers
 * share the parent's sink and threshold and add their fields to every record.
 */
import type { LogFields, Logger, LogLevel } from "../../ports/logger.js";
import { LogLevels, levelRank } from "../../ports/logger.js";
import { formatRecord, type LogFormat } from "./log-format.js";

/** Name of the environment variable that overrides the log level. */
export const LOG_LEVEL_ENV = "SHARDKIT_LOG_LEVEL";

/** Name of the environment variable that overrides the log format (json | pretty). */
export const LOG_FORMAT_ENV = "SHARDKIT_LOG_FORMAT";

/** Picks the effective format: a valid env override (`json`, `pretty`, `text`), else the option, else text. */
export function resolveLogFormat(
  option: LogFormat | undefined,
  env: Readonly<Record<string, string | undefined>>,
): LogFormat {
  const fromEnv = env[LOG_FORMAT_ENV]?.trim().toLowerCase();
  if (fromEnv === "json") return "json";
  if (fromEnv === "pretty" || fromEnv === "text") return "text";
  return option ?? "text";
}

/** Options of {@link ConsoleLogger}. */
export interface ConsoleLoggerOptions {
  /** Threshold; records below it are dropped. Default "info". */
  readonly level?: LogLevel;
  /** Line format. Default "text". */
  readonly format?: LogFormat;
  /** Receives each formatted line (without newline). Default: write to stderr. */
  readonly write?: (line: string) => void;
  /** Fields added to every record. */
  readonly fields?: LogFields;
  /** Environment consulted for SHARDKIT_LOG_LEVEL and SHARDKIT_LOG_FORMAT. Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Wall-clock source for the timestamp, epoch ms. Default `Date.now`. */
  readonly wallClockMs?: () => number;
}

interface Sink {
  readonly threshold: LogLevel;
  readonly format: LogFormat;
  readonly write: (line: string) => void;
  readonly wallClockMs: () => number;
}

/** Picks the effective level: a valid env override, else the option, else "info". */
export function resolveLogLevel(
  option: LogLevel | undefined,
  env: Readonly<Record<string, string | undefined>>,
): LogLevel {
  const fromEnv = env[LOG_LEVEL_ENV]?.trim().toLowerCase();
  const valid = LogLevels.find((level) => level === fromEnv);
  return valid ?? option ?? "info";
}

const NO_ENV: Readonly<Record<string, string | undefined>> = Object.freeze({});

function writeStderr(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** Logger writing formatted lines to stderr (or to an injected `write`). */
export class ConsoleLogger implements Logger {
  private readonly sink: Sink;
  private readonly context: LogFields;

  constructor(options: ConsoleLoggerOptions = {}) {
    const env = options.env ?? process.env;
    this.sink = {
      threshold: resolveLogLevel(options.level, env),
      format: resolveLogFormat(options.format, env),
      write: options.write ?? writeStderr,
      wallClockMs: options.wallClockMs ?? Date.now,
    };
    this.context = options.fields ?? {};
  }

  /** The effective threshold after applying the environment override. */
  get level(): LogLevel {
    return this.sink.threshold;
  }

  debug(message: string, fields?: LogFields): void {
    this.emit("debug", message, fields);
  }
  info(message: string, fields?: LogFields): void {
    this.emit("info", message, fields);
  }
  warn(message: string, fields?: LogFields): void {
    this.emit("warn", message, fields);
  }
  error(message: string, fields?: LogFields): void {
    this.emit("error", message, fields);
  }

  isEnabled(level: LogLevel): boolean {
    return level !== "off" && levelRank(level) >= levelRank(this.sink.threshold);
  }

  child(fields: LogFields): Logger {
    return new ConsoleLogger({
      level: this.sink.threshold,
      format: this.sink.format,
      write: this.sink.write,
      wallClockMs: this.sink.wallClockMs,
      env: NO_ENV,
      fields: { ...this.context, ...fields },
    });
  }

  private emit(level: Exclude<LogLevel, "off">, message: string, fields?: LogFields): void {
    if (!this.isEnabled(level)) return;
    const record = {
      timeMs: this.sink.wallClockMs(),
      level,
      message,
      context: this.context,
      fields,
    };
    this.sink.write(formatRecord(record, this.sink.format));
  }
}
