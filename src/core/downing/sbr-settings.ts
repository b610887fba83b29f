/**
 * Settings of the Split Brain Resolver (docs/architecture.md, "Split Brain Resolver":
 * downing is never automatic by timeout; the SBR decides). One validated object: the active
 * strategy, how long the unreachable set must be stable before deciding, the instability
 * bound, and the per-strategy parameters. A strategy that needs a parameter without default
 * (static-quorum's quorumSize, lease-majority's lease implementation) fails validation when
 * it is active and the parameter is missing.
 *
 * downAllWhenUnstable: "on" (default) derives the bound from stableAfterMs as
 * max(4 s, 3/4 of stableAfterMs) (15 s for the default 20 s); "off" disables it; a
 * number is the bound in ms. When reachability keeps changing for longer than
 * stableAfterMs + that bound after the first change, every node downs itself and all
 * others (see sbr-stability.ts).
 */
import { ConfigError } from "../../base/errors.js";
import {
  bool,
  int,
  ms,
  oneOf,
  type Rule,
  type RulesOf,
  resolveSettings,
} from "../../base/settings.js";

/** The strategies, by their setting name. */
export const SBR_STRATEGIES = [
  "keep-majority",
  "static-quorum",
  "keep-oldest",
  "down-all",
  "lease-majority",
  "auto-down",
] as const;

/** A strategy name. */
export type SbrStrategyName = (typeof SBR_STRATEGIES)[number];

/** static-quorum parameters. */
export interface StaticQuorumSettings {
  /** Minimum members (with `role`) a side needs to keep running; 0 = unset (invalid
   * when static-quorum is active). The cluster must not grow beyond 2 * quorumSize - 1. */
  readonly quorumSize: number;
  /** Count only members with this role (undefined: all members). */
  readonly role: string | undefined;
}

/** keep-majority parameters. */
export interface KeepMajoritySettings {
  readonly role: string | undefined;
}

/** keep-oldest parameters. */
export interface KeepOldestSettings {
  /** If the oldest is alone on its side (and the other side has >= 2), down the oldest. */
  readonly downIfAlone: boolean;
  readonly role: string | undefined;
}

/** lease-majority parameters. */
export interface LeaseMajoritySettings {
  /** Name of the Lease implementation the driver uses ("" = unset, invalid when active). */
  readonly leaseImplementation: string;
  /** The minority side waits this long before trying to acquire the lease. >= 0. */
  readonly acquireLeaseDelayForMinorityMs: number;
  /** The lease is released this long after the decision was acted upon. > 0. */
  readonly releaseAfterMs: number;
  readonly role: string | undefined;
}

/** auto-down parameters (docs/cluster.md, "Auto-down"). */
export interface AutoDownSettings {
  /** The leader downs a member once it has been unreachable this long. > 0. */
  readonly afterMs: number;
}

/** Settings of the Split Brain Resolver (durations in milliseconds). */
export interface SbrSettings {
  readonly activeStrategy: SbrStrategyName;
  /** The unreachable set must not change for this long before a decision. > 0. */
  readonly stableAfterMs: number;
  /** "on" (derived bound), "off", or the bound in ms (> 0). */
  readonly downAllWhenUnstable: "on" | "off" | number;
  /** Whether the resolver may down other members before this node has first seen the
   * cluster converged with itself up (sbr-formation.ts). Default false. */
  readonly actBeforeFirstConvergence: boolean;
  readonly staticQuorum: StaticQuorumSettings;
  readonly keepMajority: KeepMajoritySettings;
  readonly keepOldest: KeepOldestSettings;
  readonly leaseMajority: LeaseMajoritySettings;
  readonly autoDown: AutoDownSettings;
}

/** Overrides accepted by resolveSbrSettings: nested objects may be partial. */
export type SbrSettingsOverrides = Partial<{
  readonly [K in keyof SbrSettings]: SbrSettings[K] extends object
    ? Partial<SbrSettings[K]>
    : SbrSettings[K];
}>;

/** Defaults. */
export const DEFAULT_SBR_SETTINGS: SbrSettings = Object.freeze({
  activeStrategy: "keep-majority",
  stableAfterMs: 20_000,
  downAllWhenUnstable: "on",
  actBeforeFirstConvergence: false,
  staticQuorum: Object.freeze({ quorumSize: 0, role: undefined }),
  keepMajority: Object.freeze({ role: undefined }),
  keepOldest: Object.freeze({ downIfAlone: true, role: undefined }),
  leaseMajority: Object.freeze({
    leaseImplementation: "",
    acquireLeaseDelayForMinorityMs: 2000,
    releaseAfterMs: 40_000,
    role: undefined,
  }),
  autoDown: Object.freeze({ afterMs: 10_000 }),
});

/** Lower bound of the derived down-all-when-unstable duration ("on"). */
export const DOWN_ALL_WHEN_UNSTABLE_MIN_MS = 4000;
/** The derived bound is this fraction of stableAfterMs (when above the minimum). */
const DOWN_ALL_WHEN_UNSTABLE_FRACTION = 0.75;

function optionalRole(): Rule<string | undefined> {
  return (key, value) => {
    if (value === undefined) return undefined;
    if (typeof value !== "string" || value === "")
      throw new ConfigError(key, value, "a non-empty role name or undefined");
    return value;
  };
}

function anyString(): Rule<string> {
  return (key, value) => {
    if (typeof value !== "string") throw new ConfigError(key, value, "a string");
    return value;
  };
}

function positiveMs(): Rule<number> {
  return (key, value) => {
    if (typeof value !== "number" || !Number.isFinite(value) || value <= 0)
      throw new ConfigError(key, value, "a duration in milliseconds > 0");
    return value;
  };
}

function downAllWhenUnstableRule(): Rule<"on" | "off" | number> {
  return (key, value) => {
    if (value === "on" || value === "off") return value;
    if (typeof value === "number" && Number.isFinite(value) && value > 0) return value;
    throw new ConfigError(key, value, `"on", "off" or a duration in milliseconds > 0`);
  };
}

function nested<S extends object>(defaults: S, rules: RulesOf<S>): Rule<S> {
  return (key, value) => {
    if (typeof value !== "object" || value === null)
      throw new ConfigError(key, value, "a settings object");
    return resolveSettings(`${key}.`, defaults, rules, value as Partial<S>);
  };
}

const RULES: RulesOf<SbrSettings> = {
  activeStrategy: oneOf(...SBR_STRATEGIES),
  stableAfterMs: positiveMs(),
  downAllWhenUnstable: downAllWhenUnstableRule(),
  actBeforeFirstConvergence: bool(),
  staticQuorum: nested(DEFAULT_SBR_SETTINGS.staticQuorum, {
    quorumSize: int(0),
    role: optionalRole(),
  }),
  keepMajority: nested(DEFAULT_SBR_SETTINGS.keepMajority, { role: optionalRole() }),
  keepOldest: nested(DEFAULT_SBR_SETTINGS.keepOldest, {
    downIfAlone: bool(),
    role: optionalRole(),
  }),
  leaseMajority: nested(DEFAULT_SBR_SETTINGS.leaseMajority, {
    leaseImplementation: anyString(),
    acquireLeaseDelayForMinorityMs: ms(0),
    releaseAfterMs: positiveMs(),
    role: optionalRole(),
  }),
  autoDown: nested(DEFAULT_SBR_SETTINGS.autoDown, { afterMs: positiveMs() }),
};

/**
 * Defaults merged with `overrides` (nested objects merged key by key), validated.
 * Throws ConfigError on an invalid or unknown key, or when the active strategy lacks a
 * required parameter.
 */
export function resolveSbrSettings(
  overrides?: SbrSettingsOverrides,
  prefix = "sbr.",
): Readonly<SbrSettings> {
  const s = resolveSettings(prefix, DEFAULT_SBR_SETTINGS, RULES, overrides as Partial<SbrSettings>);
  if (s.activeStrategy === "static-quorum" && s.staticQuorum.quorumSize < 1)
    throw new ConfigError(
      `${prefix}staticQuorum.quorumSize`,
      s.staticQuorum.quorumSize,
      "an integer >= 1 when static-quorum is the active strategy",
    );
  if (s.activeStrategy === "lease-majority" && s.leaseMajority.leaseImplementation === "")
    throw new ConfigError(
      `${prefix}leaseMajority.leaseImplementation`,
      s.leaseMajority.leaseImplementation,
      "a lease implementation name when lease-majority is the active strategy",
    );
  return s;
}

/** The down-all-when-unstable bound in ms (0 = disabled); see the module comment. */
export function downAllWhenUnstableMsOf(settings: SbrSettings): number {
  const v = settings.downAllWhenUnstable;
  if (v === "off") return 0;
  if (v === "on")
    return Math.max(
      DOWN_ALL_WHEN_UNSTABLE_MIN_MS,
      Math.floor(settings.stableAfterMs * DOWN_ALL_WHEN_UNSTABLE_FRACTION),
    );
  return v;
}
