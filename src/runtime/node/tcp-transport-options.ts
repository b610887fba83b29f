/**
 * Settings of {@link TcpTransport}: defaults, units and validation in one place
 * (docs/architecture.md, house rule 2). Every key is validated at construction and a bad
 * value throws a ConfigError naming `transport.<key>`; unknown keys are rejected so a typo
 * cannot pass.
 */
import { ConfigError } from "../../base/errors.js";
import { bool, int, type Rule, type RulesOf, resolveSettings } from "../../base/settings.js";
import type { Logger, LogLevel } from "../../ports/logger.js";
import { NODE_TIMER_DELAY_MAX_MS } from "./node-scheduler.js";
import { type ResolvedTls, resolveTls, type TcpTransportTlsOptions } from "./tls-options.js";

/** Options of {@link TcpTransport}. */
export interface TcpTransportOptions {
  /** Mutual TLS (node:tls). Absent: plain TCP. */
  readonly tls?: TcpTransportTlsOptions;
  /**
   * `Connection.send` returns false while more than this many bytes are queued; onDrain
   * follows once the queue has flushed. Default 1 MiB; at least 16 KiB (Node's own socket
   * mark, below which its 'drain' event would not fire).
   */
  readonly sendHighWaterMarkBytes?: number;
  /** Bound on establishing a connection, TLS handshake included. Default 5000 ms. */
  readonly connectTimeoutMs?: number;
  /**
   * After `Connection.close()`, how long queued bytes may take to flush and the peer to
   * finish closing before the socket is destroyed (dropping what is left). Default 5000 ms.
   */
  readonly closeLingerMs?: number;
  /** Disable Nagle's algorithm (lower latency for small frames). Default true. */
  readonly noDelay?: boolean;
  /**
   * TCP keep-alive idle time; 0 disables it, else at least 1000 (the OS counts whole
   * seconds). Default 10000 ms.
   */
  readonly keepAliveMs?: number;
  /** Where connection-level problems are logged. Default: nowhere. */
  readonly logger?: Logger;
}

/** The numeric and boolean settings, validated. */
export interface TcpTransportSettings {
  readonly sendHighWaterMarkBytes: number;
  readonly connectTimeoutMs: number;
  readonly closeLingerMs: number;
  readonly noDelay: boolean;
  readonly keepAliveMs: number;
}

/** Everything the transport needs, validated. */
export interface ResolvedTcpTransportOptions extends TcpTransportSettings {
  readonly tls: ResolvedTls | undefined;
  readonly logger: Logger;
}

/** Node's default writable high-water mark of a socket (stream default on Node 20). */
export const SOCKET_HIGH_WATER_MARK_MIN_BYTES = 16 * 1024;
const SEND_HIGH_WATER_MARK_MAX_BYTES = 2 ** 31 - 1;
const KEEP_ALIVE_MIN_MS = 1000;

/** Defaults of {@link TcpTransportOptions}. */
export const TCP_TRANSPORT_DEFAULTS: TcpTransportSettings = Object.freeze({
  sendHighWaterMarkBytes: 1024 * 1024,
  connectTimeoutMs: 5000,
  closeLingerMs: 5000,
  noDelay: true,
  keepAliveMs: 10_000,
});

const RULES: RulesOf<TcpTransportSettings> = {
  sendHighWaterMarkBytes: int(SOCKET_HIGH_WATER_MARK_MIN_BYTES, SEND_HIGH_WATER_MARK_MAX_BYTES),
  connectTimeoutMs: int(1, NODE_TIMER_DELAY_MAX_MS),
  closeLingerMs: int(0, NODE_TIMER_DELAY_MAX_MS),
  noDelay: bool(),
  keepAliveMs: keepAlive(),
};

/** Validates `options`; throws ConfigError naming the offending `transport.*` key. */
export function resolveTcpTransportOptions(options: unknown): ResolvedTcpTransportOptions {
  if (options === undefined) options = {};
  if (typeof options !== "object" || options === null)
    throw new ConfigError("transport", options, "an options object");
  const { tls, logger, ...rest } = options as Record<string, unknown>;
  const settings = resolveSettings("transport.", TCP_TRANSPORT_DEFAULTS, RULES, rest);
  return { ...settings, tls: resolveTls(tls), logger: resolveLogger(logger) };
}

/** Validates a per-call connect timeout (`connect(address, { timeoutMs })`). */
export function resolveConnectTimeoutMs(timeoutMs: unknown, fallbackMs: number): number {
  if (timeoutMs === undefined) return fallbackMs;
  return RULES.connectTimeoutMs("transport.connect.timeoutMs", timeoutMs);
}

function keepAlive(): Rule<number> {
  const positive = int(KEEP_ALIVE_MIN_MS, NODE_TIMER_DELAY_MAX_MS);
  return (key, value) => (value === 0 ? 0 : positive(key, value));
}

function resolveLogger(logger: unknown): Logger {
  if (logger === undefined) return SILENT_LOGGER;
  const ok = typeof logger === "object" && logger !== null && "warn" in logger;
  if (!ok) throw new ConfigError("transport.logger", logger, "a Logger");
  return logger as Logger;
}

/** Logger that drops everything: the default when no logger is given. */
const SILENT_LOGGER: Logger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
  isEnabled: (_level: LogLevel) => false,
  child: () => SILENT_LOGGER,
};
