/**
 * Settings of the simulated network: the per-link fault model and the network-wide
 * timeouts and limits, with their defaults and validation (ConfigError on bad values).
 *
 * A link is a directed pair of nodes (from -> to). Its config applies to every byte and
 * handshake packet travelling in that direction; the reverse direction has its own.
 */
import { ConfigError } from "../../../base/errors.js";
import { bool, int, ms, num, type Rule, resolveSettings } from "../../../base/settings.js";

/** Fault model of one directed link. */
export interface LinkConfig {
  /** One-way propagation delay, ms. */
  readonly latencyMs: number;
  /** Extra delay drawn uniformly from [0, jitterMs] per segment, ms. */
  readonly jitterMs: number;
  /** Transmission rate shared by all connections on the link, bytes per ms (Infinity = none). */
  readonly bandwidthBytesPerMs: number;
  /** Probability that a data segment kills its connection (reset on both sides). */
  readonly lossProbability: number;
  /** Probability that a connect attempt over this link fails with a handshake reset. */
  readonly connectFailProbability: number;
}

/** Options of a SimNetwork. */
export interface SimNetworkOptions {
  /** Overrides of the default link config, applied to every pair without its own config. */
  readonly link?: Partial<LinkConfig>;
  /** A connection blocked by a partition this long is reset on both sides. Default 5 000. */
  readonly partitionResetAfterMs?: number;
  /** Default connect timeout (world time) when `connect` is not given one. Default 10 000. */
  readonly connectTimeoutMs?: number;
  /** `send` returns false when a side's unsent bytes exceed this. Default 1 MiB. */
  readonly sendBufferHighWaterBytes?: number;
  /** Record every delivered segment in the trace (large). Default false. */
  readonly recordSegments?: boolean;
}

/** Resolved network settings (everything but the link defaults). */
export interface SimNetworkSettings {
  readonly partitionResetAfterMs: number;
  readonly connectTimeoutMs: number;
  readonly sendBufferHighWaterBytes: number;
  readonly recordSegments: boolean;
}

/** The default link: 1 ms latency and no faults. */
export const DEFAULT_LINK_CONFIG: LinkConfig = Object.freeze({
  latencyMs: 1,
  jitterMs: 0,
  bandwidthBytesPerMs: Number.POSITIVE_INFINITY,
  lossProbability: 0,
  connectFailProbability: 0,
});

const DEFAULT_SETTINGS: SimNetworkSettings = Object.freeze({
  partitionResetAfterMs: 5_000,
  connectTimeoutMs: 10_000,
  sendBufferHighWaterBytes: 1024 * 1024,
  recordSegments: false,
});

/** A positive number of bytes per ms, or Infinity. */
function bandwidth(): Rule<number> {
  return (key, value) => {
    const ok =
      typeof value === "number" &&
      value > 0 &&
      (Number.isFinite(value) || value === Number.POSITIVE_INFINITY);
    if (!ok) throw new ConfigError(key, value, "a number of bytes per ms > 0, or Infinity");
    return value as number;
  };
}

const LINK_RULES = {
  latencyMs: ms(),
  jitterMs: ms(),
  bandwidthBytesPerMs: bandwidth(),
  lossProbability: num(0, 1),
  connectFailProbability: num(0, 1),
};

const SETTINGS_RULES = {
  partitionResetAfterMs: ms(),
  connectTimeoutMs: ms(),
  sendBufferHighWaterBytes: int(1),
  recordSegments: bool(),
};

/** Merges `overrides` onto `base` and validates the result. */
export function resolveLinkConfig(
  base: LinkConfig,
  overrides: Partial<LinkConfig> | undefined,
  prefix = "simNetwork.link.",
): LinkConfig {
  return resolveSettings(prefix, base, LINK_RULES, overrides);
}

/** Validates network options; returns the settings and the default link config. */
export function resolveNetworkOptions(options: SimNetworkOptions = {}): {
  readonly settings: SimNetworkSettings;
  readonly defaultLink: LinkConfig;
} {
  const { link, ...rest } = options;
  return {
    settings: resolveSettings("simNetwork.", DEFAULT_SETTINGS, SETTINGS_RULES, rest),
    defaultLink: resolveLinkConfig(DEFAULT_LINK_CONFIG, link),
  };
}
