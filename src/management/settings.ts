/**
 * Settings of the management HTTP server (ClusterNode.start's `management` option),
 * defaulted and validated in one place. Binding anywhere but loopback requires a token:
 * the routes can make members leave or be downed.
 */
import type { ManagementOptions } from "../api/node-extensions.js";
import { ConfigError } from "../base/errors.js";
import { bool, int, ms, type RulesOf, resolveSettings } from "../base/settings.js";

export interface ManagementSettings {
  readonly port: number;
  readonly host: string;
  readonly token: string | undefined;
  readonly requestBodyMaxBytes: number;
  readonly requestsPerWindowMax: number;
  readonly rateWindowMs: number;
  readonly requestTimeoutMs: number;
  /** Serve `GET /metrics` and keep the node's metrics (docs/observability.md). */
  readonly metrics: boolean;
  /** Serve `GET /dashboard` (docs/observability.md). */
  readonly dashboard: boolean;
  /** Poll interval of the dashboard page. */
  readonly dashboardRefreshMs: number;
}

/** Akka Management's default port, so tools and habits carry over. */
export const MANAGEMENT_PORT_DEFAULT = 8558;
export const MANAGEMENT_HOST_DEFAULT = "127.0.0.1";
/** Shortest accepted token (a guessable token on a reachable port is no protection). */
export const MANAGEMENT_TOKEN_LENGTH_MIN = 16;

export const DEFAULT_MANAGEMENT_SETTINGS: ManagementSettings = Object.freeze({
  port: MANAGEMENT_PORT_DEFAULT,
  host: MANAGEMENT_HOST_DEFAULT,
  token: undefined,
  requestBodyMaxBytes: 16_384,
  requestsPerWindowMax: 100,
  rateWindowMs: 1_000,
  requestTimeoutMs: 10_000,
  metrics: true,
  dashboard: true,
  dashboardRefreshMs: 1_000,
});

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

/** True for hosts only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  return LOOPBACK.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host);
}

const RULES: RulesOf<ManagementSettings> = {
  port: int(0, 65_535),
  host: (key: string, value: unknown) => {
    if (typeof value !== "string" || value.trim() === "" || /\s|\/|:\d+$/.test(value.trim()))
      throw new ConfigError(key, value, "a host name or IP address to bind (no port, no scheme)");
    return value.trim();
  },
  token: (key: string, value: unknown) => {
    if (value === undefined) return undefined;
    if (typeof value !== "string" || value.length < MANAGEMENT_TOKEN_LENGTH_MIN || /\s/.test(value))
      throw new ConfigError(
        key,
        "(redacted)",
        `a string of at least ${MANAGEMENT_TOKEN_LENGTH_MIN} characters without spaces, or unset`,
      );
    return value;
  },
  requestBodyMaxBytes: int(1, 16 * 1024 * 1024),
  requestsPerWindowMax: int(1),
  rateWindowMs: ms(1),
  requestTimeoutMs: ms(1),
  metrics: bool(),
  dashboard: bool(),
  dashboardRefreshMs: ms(100, 60_000),
};

/**
 * Defaults merged with `options`, validated.
 * @throws ConfigError naming the key (`management.token` when a non-loopback host has none).
 */
export function resolveManagementSettings(options: ManagementOptions = {}): ManagementSettings {
  const s = resolveSettings("management.", DEFAULT_MANAGEMENT_SETTINGS, RULES, options);
  if (!isLoopbackHost(s.host) && s.token === undefined)
    throw new ConfigError(
      "management.token",
      undefined,
      `a bearer token when management.host is not loopback ("${s.host}"): the routes can make members leave or be downed`,
    );
  return s;
}
