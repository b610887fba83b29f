/**
 * Settings of the shard coordinator (one object, docs/architecture.md, house rule 2): every
 * timeout, interval and limit with its unit in the name, a written-down default and
 * validation that names the key. `resolveCoordinatorSettings` is the only way the machine
 * gets them.
 */
import { ConfigError } from "../../base/errors.js";
import { bool, int, ms, type RulesOf, resolveSettings } from "../../base/settings.js";

/** Settings of the shard coordinator. */
export interface CoordinatorSettings {
  /**
   * How often the driver feeds `rebalance-tick` (ms, >= 1). The machine does not time
   * the ticks itself; each tick asks the strategy for shards to move.
   */
  readonly rebalanceIntervalMs: number;
  /**
   * A hand-off (BeginHandOff .. ShardStopped) that does not finish within this many ms is
   * aborted: the shard stays with its old owner (ms, >= 1).
   */
  readonly handOffTimeoutMs: number;
  /** HostShard is resent every this many ms until the owner answers ShardStarted (>= 1). */
  readonly shardStartTimeoutMs: number;
  /** No shard is allocated before this many regions have registered (integer >= 1). */
  readonly minNrOfMembers: number;
  /**
   * Most hand-offs in progress at once, rebalance and graceful shutdown together
   * (integer >= 1). Graceful-shutdown hand-offs take the free slots first; strategy
   * proposals beyond the free slots wait for a later tick.
   */
  readonly rebalanceConcurrencyMax: number;
  /**
   * Most distinct shards with GetShardHome requests waiting for an answer (integer >= 1).
   * Overflow: the request for a new shard is dropped, logged and counted; regions retry.
   */
  readonly waitingShardsMax: number;
  /** Most events written in one persist batch (integer >= 1); the rest wait their turn. */
  readonly persistBatchMax: number;
  /** First wait before writing a failed batch again (ms, >= 1); doubles per failure. */
  readonly persistRetryBackoffMs: number;
  /** Longest wait between write retries (ms, >= persistRetryBackoffMs). */
  readonly persistRetryBackoffMaxMs: number;
  /** Ask the driver to save a snapshot after this many persisted events (0 = never). */
  readonly snapshotAfterEvents: number;
  /**
   * Remember entities: a shard that loses its home (hand-off or region termination) is
   * allocated again at once, without waiting for a message, so its entities restart.
   */
  readonly rememberEntities: boolean;
  /**
   * A region whose member was removed from the cluster (downed: crashed, or on the other
   * side of a partition) keeps its shards this many ms longer before they may get new
   * homes; requests for them wait meanwhile (ms, >= 0; 0 = at once). The downed side
   * stops its shards only once its own split brain resolver decides, so this margin
   * keeps the two sides from running a shard at the same time. ClusterSharding sets it
   * (and its coordinator singleton's removal margin) to the cluster's
   * downRemovalMarginMs, or else the resolver's stableAfterMs plus its
   * down-all-when-unstable bound, unless given here.
   */
  readonly regionRemovalMarginMs: number;
  /**
   * The type's shards hold leases (docs/sharding.md, "Leases and fencing"): a new home
   * cannot start a shard before the old holder's lease expired or was released, so the
   * coordinator may move the shards of a region whose member is unreachable without
   * waiting for the member to be downed and removed (see unreachableMoveAfterMs).
   * ClusterSharding sets it when the type has a lease.
   */
  readonly shardsLeased: boolean;
  /**
   * With shardsLeased: the shards of a region whose member has been unreachable this many
   * ms get new homes (ms, >= 0; 0 = as soon as it is seen unreachable). The new home
   * starts them once it acquires their leases (after the lease ttl since the old holder's
   * last renewal if it crashed); an old holder that is only cut off is told to hand them
   * off when it is reachable again. Requests for its shards wait meanwhile. Raise it to
   * avoid moving shards on short network blips. Ignored without shardsLeased.
   */
  readonly unreachableMoveAfterMs: number;
}

/** Defaults (the classic Akka values where one exists). */
export const DEFAULT_COORDINATOR_SETTINGS: CoordinatorSettings = Object.freeze({
  rebalanceIntervalMs: 10_000,
  handOffTimeoutMs: 60_000,
  shardStartTimeoutMs: 10_000,
  minNrOfMembers: 1,
  rebalanceConcurrencyMax: 100,
  waitingShardsMax: 100_000,
  persistBatchMax: 1_000,
  persistRetryBackoffMs: 5_000,
  persistRetryBackoffMaxMs: 25_000,
  snapshotAfterEvents: 1_000,
  rememberEntities: false,
  regionRemovalMarginMs: 0,
  shardsLeased: false,
  unreachableMoveAfterMs: 0,
});

const RULES: RulesOf<CoordinatorSettings> = {
  rebalanceIntervalMs: ms(1),
  handOffTimeoutMs: ms(1),
  shardStartTimeoutMs: ms(1),
  minNrOfMembers: int(1),
  rebalanceConcurrencyMax: int(1),
  waitingShardsMax: int(1),
  persistBatchMax: int(1),
  persistRetryBackoffMs: ms(1),
  persistRetryBackoffMaxMs: ms(1),
  snapshotAfterEvents: int(0),
  rememberEntities: bool(),
  regionRemovalMarginMs: ms(0),
  shardsLeased: bool(),
  unreachableMoveAfterMs: ms(0),
};

/** Defaults merged with `overrides`, validated (ConfigError names the key). */
export function resolveCoordinatorSettings(
  overrides?: Partial<CoordinatorSettings>,
  prefix = "coordinator.",
): Readonly<CoordinatorSettings> {
  const s = resolveSettings(prefix, DEFAULT_COORDINATOR_SETTINGS, RULES, overrides);
  if (s.persistRetryBackoffMaxMs < s.persistRetryBackoffMs)
    throw new ConfigError(
      `${prefix}persistRetryBackoffMaxMs`,
      s.persistRetryBackoffMaxMs,
      `a duration in milliseconds >= persistRetryBackoffMs (${s.persistRetryBackoffMs})`,
    );
  return s;
}
