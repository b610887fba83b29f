/**
 * The real runtime: ports backed by Node's clock, timers, randomness and stderr. This
 * folder is the only place in shardkit allowed to touch them (docs/architecture.md, "The
 * determinism boundary").
 */
import type { Logger, LogLevel } from "../../ports/logger.js";
import type { Runtime } from "../../ports/runtime.js";
import { ConsoleLogger } from "./console-logger.js";
import type { LogFormat } from "./log-format.js";
import { NodeClock } from "./node-clock.js";
import { NodeEventLoopMonitor } from "./node-event-loop.js";
import { NodeRandom } from "./node-random.js";
import { NodeScheduler } from "./node-scheduler.js";

export { yieldToHost } from "../host/yield.js";
export {
  ConsoleLogger,
  type ConsoleLoggerOptions,
  LOG_FORMAT_ENV,
  LOG_LEVEL_ENV,
  resolveLogFormat,
  resolveLogLevel,
} from "./console-logger.js";
export { formatRecord, type LogFormat, type LogRecord } from "./log-format.js";
export { NodeClock } from "./node-clock.js";
export { EVENT_LOOP_MONITOR_RESOLUTION_MS, NodeEventLoopMonitor } from "./node-event-loop.js";
export { NodeRandom } from "./node-random.js";
export {
  NODE_TIMER_DELAY_MAX_MS,
  NodeScheduler,
  type NodeSchedulerOptions,
} from "./node-scheduler.js";
export { type PinoLike, pinoLogger } from "./pino-logger.js";
export {
  installSignalHandlers,
  SHUTDOWN_SIGNALS,
  type SignalHandlerOptions,
  type SignalTarget,
  shutdownReasonOfSignal,
} from "./signals.js";
export {
  TcpTransport,
  TRANSPORT_LOG_BURST_MAX,
  TRANSPORT_LOG_INTERVAL_MS,
} from "./tcp-transport.js";
export {
  TCP_TRANSPORT_DEFAULTS,
  type TcpTransportOptions,
} from "./tcp-transport-options.js";
export type { PemInput, TcpTransportTlsOptions } from "./tls-options.js";

/** Options of {@link createNodeRuntime}. */
export interface NodeRuntimeOptions {
  /** Console log threshold (SHARDKIT_LOG_LEVEL overrides). Default "info". */
  readonly logLevel?: LogLevel;
  /** Console log format (SHARDKIT_LOG_FORMAT=json|pretty overrides). Default "text". */
  readonly logFormat?: LogFormat;
  /** Seed for a reproducible Random; default Math.random. */
  readonly seed?: number;
  /** Use this logger instead of the console logger (logLevel/logFormat are then ignored). */
  readonly logger?: Logger;
  /** Unref timers so they do not keep the process alive. Default false. */
  readonly unrefTimers?: boolean;
}

/** The real Runtime; `scheduler` is exposed concretely for `liveTimers` and `dispose`. */
export interface NodeRuntime extends Runtime {
  readonly scheduler: NodeScheduler;
  readonly eventLoop: NodeEventLoopMonitor;
}

/** Builds the ports of a real Node.js process. */
export function createNodeRuntime(options: NodeRuntimeOptions = {}): NodeRuntime {
  return {
    clock: new NodeClock(),
    scheduler: new NodeScheduler({ unrefTimers: options.unrefTimers ?? false }),
    eventLoop: new NodeEventLoopMonitor(),
    random: new NodeRandom(options.seed),
    logger:
      options.logger ?? new ConsoleLogger({ level: options.logLevel, format: options.logFormat }),
  };
}
export { hmacSha256, nodeCrypto } from "./node-crypto.js";
