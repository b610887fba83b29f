/**
 * A simulated node's Logger: records go into the world's trace (so logs are part of
 * the run's fingerprint) and are printed only when the world asks for it.
 *
 * Which levels are recorded and printed is the world's decision (LogSink); this class
 * only carries the node name and the child fields.
 */
import type { LogFields, Logger, LogLevel } from "../../ports/logger.js";

/** The world-side receiver of simulated log records. */
export interface SimLogSink {
  isEnabled(level: LogLevel): boolean;
  log(node: string, level: Exclude<LogLevel, "off">, message: string, fields: LogFields): void;
}

/** Logger of one simulated node. */
export class SimLogger implements Logger {
  constructor(
    private readonly sink: SimLogSink,
    private readonly node: string,
    private readonly context: LogFields = {},
  ) {}

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
    return this.sink.isEnabled(level);
  }

  child(fields: LogFields): Logger {
    return new SimLogger(this.sink, this.node, { ...this.context, ...fields });
  }

  private emit(level: Exclude<LogLevel, "off">, message: string, fields?: LogFields): void {
    if (!this.sink.isEnabled(level)) return;
    const merged = fields === undefined ? this.context : { ...this.context, ...fields };
    this.sink.log(this.node, level, message, merged);
  }
}
