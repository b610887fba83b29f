/**
 * An adapter from a pino logger to shardkit's Logger port (docs/observability.md, "Logs").
 * pino is not a dependency: the application passes its own pino instance; the type below
 * is the part of pino's API the adapter uses, so any pino version >= 7 fits.
 *
 * Mapping: `log.info(message, fields)` -> `pino.info(fields, message)`; `child(fields)` ->
 * `pino.child(fields)`; `isEnabled(level)` -> `pino.isLevelEnabled(level)`. Errors in
 * fields are passed as they are (pino's serializers handle `err`/`error`).
 */
import type { LogFields, Logger, LogLevel } from "../../ports/logger.js";

/** The part of a pino logger the adapter uses. */
export interface PinoLike {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  isLevelEnabled(level: string): boolean;
  child(bindings: Record<string, unknown>): PinoLike;
}

/** shardkit's Logger writing through `pino`. */
export function pinoLogger(pino: PinoLike): Logger {
  return {
    debug: (message, fields) => pino.debug(fields ?? {}, message),
    info: (message, fields) => pino.info(fields ?? {}, message),
    warn: (message, fields) => pino.warn(fields ?? {}, message),
    error: (message, fields) => pino.error(fields ?? {}, message),
    isEnabled: (level: LogLevel) => level !== "off" && pino.isLevelEnabled(level),
    child: (fields: LogFields) => pinoLogger(pino.child({ ...fields })),
  };
}
