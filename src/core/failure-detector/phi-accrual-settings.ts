/**
 * Settings of the phi accrual failure detector, with defaults and validation
 * (docs/architecture.md, "Failure detection": threshold 8, acceptable pause 3 s, min
 * std-dev 100 ms, window 1000). Validated once when a detector is created, so a bad value
 * fails at startup with a ConfigError naming the key rather than silently skewing failure
 * detection.
 */
import { ConfigError } from "../../base/errors.js";
import { int, ms, type Rule, type RulesOf, resolveSettings } from "../../base/settings.js";

/** Settings of one phi accrual failure detector (all durations in milliseconds). */
export interface PhiAccrualSettings {
  /** phi at or above which the peer is considered unavailable. Finite, > 0. */
  readonly threshold: number;
  /** Bound of the interval history window (oldest dropped first). Integer in [1, 1e6]. */
  readonly maxSampleSize: number;
  /** Floor of the standard deviation used by phi, so a very regular peer is not declared
   * dead on a small delay. > 0 ms. */
  readonly minStdDeviationMs: number;
  /** Extra silence tolerated on top of the mean interval (GC pauses, brief network
   * hiccups). >= 0 ms. */
  readonly acceptableHeartbeatPauseMs: number;
  /** Assumed heartbeat interval before any has been measured; seeds the history with
   * E - E/4 and E + E/4 (integer division). Integer >= 1 ms. */
  readonly firstHeartbeatEstimateMs: number;
}

/** Defaults (docs/cluster.md, "Failure detection"). */
export const DEFAULT_PHI_ACCRUAL_SETTINGS: PhiAccrualSettings = Object.freeze({
  threshold: 8,
  maxSampleSize: 1000,
  minStdDeviationMs: 100,
  acceptableHeartbeatPauseMs: 3000,
  firstHeartbeatEstimateMs: 1000,
});

/** Largest accepted `maxSampleSize`. */
export const PHI_MAX_SAMPLE_SIZE_MAX = 1_000_000;

function positive(what: string): Rule<number> {
  return (key, value) => {
    if (typeof value !== "number" || !Number.isFinite(value) || value <= 0)
      throw new ConfigError(key, value, `${what} > 0`);
    return value;
  };
}

const RULES: RulesOf<PhiAccrualSettings> = {
  threshold: positive("a finite number"),
  maxSampleSize: int(1, PHI_MAX_SAMPLE_SIZE_MAX),
  minStdDeviationMs: positive("a finite duration in milliseconds"),
  acceptableHeartbeatPauseMs: ms(0),
  firstHeartbeatEstimateMs: int(1),
};

/**
 * Defaults merged with `overrides`, validated. Throws ConfigError (key prefixed with
 * `prefix`) on an invalid or unknown key.
 */
export function resolvePhiAccrualSettings(
  overrides?: Partial<PhiAccrualSettings>,
  prefix = "failureDetector.",
): Readonly<PhiAccrualSettings> {
  return resolveSettings(prefix, DEFAULT_PHI_ACCRUAL_SETTINGS, RULES, overrides);
}
