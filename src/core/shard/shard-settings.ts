/**
 * Settings of one shard (the entity lifecycle inside a shard, shard-machine.ts). One
 * validated object per docs/architecture.md, house rule 2: every interval and bound has its
 * unit in the name, a default and a range.
 *
 * Automatic passivation (idle timeout, active-entity limit) is always off while
 * rememberEntities is on: a remembered entity is meant to keep running until it
 * passivates itself, so the machine ignores passivateIdleAfterMs and the limit then.
 */
import { bool, int, ms, oneOf, type RulesOf, resolveSettings } from "../../base/settings.js";

/** How remembered entities are started when a shard starts. */
export const ENTITY_RECOVERY_STRATEGIES = ["all", "constant"] as const;

/** "all": every remembered entity at once; "constant": N every frequency. */
export type EntityRecoveryStrategy = (typeof ENTITY_RECOVERY_STRATEGIES)[number];

/** Settings of one shard (durations in milliseconds). */
export interface ShardSettings {
  /** Persist which entities run; restart them after rebalance, shard restart and crash. */
  readonly rememberEntities: boolean;
  /** Passivate entities that received no message for this long. 0 = off. */
  readonly passivateIdleAfterMs: number;
  /** How often idle entities are looked for. 0 = half of passivateIdleAfterMs. */
  readonly passivateIdleSweepIntervalMs: number;
  /** A remembered entity that stopped without passivating is restarted after this. */
  readonly entityRestartBackoffMs: number;
  /** How remembered entities are started when the shard starts. */
  readonly entityRecoveryStrategy: EntityRecoveryStrategy;
  /** "constant" strategy: interval between two batches of starts. */
  readonly entityRecoveryConstantRateFrequencyMs: number;
  /** "constant" strategy: entities started per batch. */
  readonly entityRecoveryConstantRateNumberOfEntities: number;
  /** Remember entities: at most this many started/stopped ids per store write. */
  readonly maxUpdatesPerWrite: number;
  /** Remember entities: a failed store write is retried after this. */
  readonly rememberWriteRetryBackoffMs: number;
  /**
   * Messages the shard holds at once, over all its buffers (entities starting,
   * passivating, waiting for the store, shard recovering, hand-off). Overflow: the
   * message goes out as `buffer-overflow` (dead letters, counted).
   */
  readonly bufferSizeMax: number;
  /** Hand-off: entities not terminated after this are force-stopped. */
  readonly handOffTimeoutMs: number;
}

/** Defaults of a shard. */
export const DEFAULT_SHARD_SETTINGS: ShardSettings = Object.freeze({
  rememberEntities: false,
  passivateIdleAfterMs: 120_000,
  passivateIdleSweepIntervalMs: 0,
  entityRestartBackoffMs: 10_000,
  entityRecoveryStrategy: "all",
  entityRecoveryConstantRateFrequencyMs: 100,
  entityRecoveryConstantRateNumberOfEntities: 5,
  maxUpdatesPerWrite: 100,
  rememberWriteRetryBackoffMs: 1_000,
  bufferSizeMax: 100_000,
  handOffTimeoutMs: 60_000,
});

const RULES: RulesOf<ShardSettings> = {
  rememberEntities: bool(),
  passivateIdleAfterMs: ms(0),
  passivateIdleSweepIntervalMs: ms(0),
  entityRestartBackoffMs: ms(1),
  entityRecoveryStrategy: oneOf(...ENTITY_RECOVERY_STRATEGIES),
  entityRecoveryConstantRateFrequencyMs: ms(1),
  entityRecoveryConstantRateNumberOfEntities: int(1, 1_000_000),
  maxUpdatesPerWrite: int(1, 1_000_000),
  rememberWriteRetryBackoffMs: ms(1),
  bufferSizeMax: int(1),
  handOffTimeoutMs: ms(1),
};

/** Defaults merged with `overrides`, validated; throws ConfigError naming a bad key. */
export function resolveShardSettings(overrides?: Partial<ShardSettings>): Readonly<ShardSettings> {
  return resolveSettings("sharding.", DEFAULT_SHARD_SETTINGS, RULES, overrides);
}

/** True when idle passivation runs (configured and not disabled by remember entities). */
export function idlePassivationEnabled(s: ShardSettings): boolean {
  return s.passivateIdleAfterMs > 0 && !s.rememberEntities;
}

/** Interval of the idle sweep: the setting, or half the idle timeout (at least 1 ms). */
export function idleSweepIntervalMs(s: ShardSettings): number {
  if (s.passivateIdleSweepIntervalMs > 0) return s.passivateIdleSweepIntervalMs;
  return Math.max(1, Math.floor(s.passivateIdleAfterMs / 2));
}
