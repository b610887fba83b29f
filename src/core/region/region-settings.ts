/**
 * Settings of a shard region or proxy (region-machine.ts). One validated object per
 * docs/architecture.md, house rule 2: every interval and bound has its unit in the name, a
 * default and a range. `resolveRegionSettings` is the only way the machine gets them.
 */
import { ConfigError } from "../../base/errors.js";
import { int, ms, type RulesOf, resolveSettings } from "../../base/settings.js";

/** Settings of one region (durations in milliseconds). */
export interface RegionSettings {
  /**
   * Longest wait between two registration attempts, and the period of the retry tick
   * that asks GetShardHome again for shards still without a home (ms, >= 1).
   */
  readonly retryIntervalMs: number;
  /**
   * First wait between registration attempts; it doubles per attempt up to
   * retryIntervalMs, so a region finds a fresh coordinator fast without flooding a
   * missing one (ms, >= 1, <= retryIntervalMs).
   */
  readonly registrationRetryMinMs: number;
  /**
   * Messages the region holds at once, over all shards whose home is unknown, moving or
   * starting (integer >= 1). Overflow: the new message goes to dead letters and is
   * counted. Messages a local shard hands back at the end of a hand-off are always
   * taken back (they were already held by the shard), so the total can exceed the bound
   * by those; new messages are refused until it is below again.
   */
  readonly bufferSizeMax: number;
  /**
   * Least time between two repetitions of one rate-limited warning (overflow, buffer
   * level, registration), and how long a region stays unregistered before its first
   * "not registered" warning (ms, >= 1).
   */
  readonly warnIntervalMs: number;
  /**
   * Most active entities in this region (0 = no limit). Divided evenly over the region's
   * active shards; a shard over its share passivates its least recently used entities.
   * Off while rememberEntities is on.
   */
  readonly activeEntityLimit: number;
}

/** Defaults (retry interval and buffer size are the classic Akka values). */
export const DEFAULT_REGION_SETTINGS: RegionSettings = Object.freeze({
  retryIntervalMs: 2_000,
  registrationRetryMinMs: 100,
  bufferSizeMax: 100_000,
  warnIntervalMs: 10_000,
  activeEntityLimit: 0,
});

const RULES: RulesOf<RegionSettings> = {
  retryIntervalMs: ms(1),
  registrationRetryMinMs: ms(1),
  bufferSizeMax: int(1),
  warnIntervalMs: ms(1),
  activeEntityLimit: int(0),
};

/** Defaults merged with `overrides`, validated; throws ConfigError naming a bad key. */
export function resolveRegionSettings(
  overrides?: Partial<RegionSettings>,
  prefix = "region.",
): Readonly<RegionSettings> {
  const s = resolveSettings(prefix, DEFAULT_REGION_SETTINGS, RULES, overrides);
  if (s.registrationRetryMinMs > s.retryIntervalMs)
    throw new ConfigError(
      `${prefix}registrationRetryMinMs`,
      s.registrationRetryMinMs,
      `a duration in milliseconds <= retryIntervalMs (${s.retryIntervalMs})`,
    );
  return s;
}

/** Wait before registration attempt `attempt + 1`: min doubled per attempt, capped. */
export function registrationDelayMs(s: RegionSettings, attempt: number): number {
  return Math.min(s.retryIntervalMs, s.registrationRetryMinMs * 2 ** Math.min(attempt, 30));
}

/**
 * The active-entity limit of each shard when a region with `regionLimit` (0 = none) hosts
 * `activeShards` shards: an even share, at least 1; Infinity when there is no limit.
 */
export function perShardActiveLimit(regionLimit: number, activeShards: number): number {
  if (regionLimit <= 0) return Number.POSITIVE_INFINITY;
  return Math.max(1, Math.floor(regionLimit / Math.max(1, activeShards)));
}
