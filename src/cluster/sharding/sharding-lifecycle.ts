/**
 * An optional observer of where shards and entities run: each shard reports when it
 * starts and stops, and when it starts an entity and sees it terminate. The registry
 * oracle of `shardkit/testing` (ShardingOracle) is built on it, and so are the node's
 * metrics (src/observability/node-metrics.ts), which also take the rarer events below:
 * passivations, the region's GetShardHome round trips, the coordinator's finished, timed-out
 * and abandoned hand-offs. None of them is per message; the figures of a region and its
 * shards (buffered messages) are read on demand through its RegionProbe.
 *
 * `node` is the unique address of the reporting member (`protocol://system@host:port#uid`),
 * so two incarnations of one host are told apart. Calls happen inside the shard, region
 * or coordinator actor: a listener must be quick; what it throws is swallowed so that it
 * cannot break sharding.
 */
import type { HandOffReason } from "../../core/coordinator/hand-off-tracker.js";
import type { StopReason } from "../../core/shard/shard-types.js";

export type { HandOffReason };

/** Receives shard and entity start/stop reports (every method optional). */
export interface ShardingLifecycleListener {
  /** The shard actor of `shardId` started on `node`. */
  shardStarted?(typeName: string, shardId: string, node: string): void;
  /** The shard actor stopped (its entities were reported stopped just before). */
  shardStopped?(typeName: string, shardId: string, node: string): void;
  /** The shard started an incarnation of `entityId`. */
  entityStarted?(typeName: string, entityId: string, node: string, shardId: string): void;
  /** That incarnation terminated (stopped, failed, or stopped with its shard). */
  entityStopped?(typeName: string, entityId: string, node: string, shardId: string): void;
  /**
   * The shard asked `entityId` to stop to passivate it: `passivate` (the entity asked),
   * `idle` (passivateIdleAfterMs) or `limit` (the active-entity limit). Not for hand-offs.
   */
  entityPassivated?(
    typeName: string,
    entityId: string,
    node: string,
    shardId: string,
    reason: PassivationReason,
  ): void;
  /**
   * The region of `typeName` started on `node`; `probe` reads its current figures (the
   * metrics read it when scraped). Told again if the region restarts.
   */
  regionStarted?(typeName: string, node: string, probe: RegionProbe): void;
  /** That region stopped (`probe` is the one given to regionStarted). */
  regionStopped?(typeName: string, node: string, probe: RegionProbe): void;
  /**
   * The coordinator answered the region's GetShardHome for `shardId`: `latencyMs` from the
   * first request for it (retries and a coordinator change included) to the answer.
   */
  shardHomeReceived?(typeName: string, shardId: string, node: string, latencyMs: number): void;
  /**
   * The coordinator (running on `node`) finished a hand-off of `shardId` (its old owner
   * stopped it), `durationMs` after BeginHandOff; `reason` is `rebalance` or `shutdown`.
   */
  handOffCompleted?(
    typeName: string,
    shardId: string,
    node: string,
    reason: HandOffReason,
    durationMs: number,
  ): void;
  /** A hand-off the coordinator started timed out (handOffTimeoutMs); the shard stays. */
  handOffTimedOut?(typeName: string, shardId: string, node: string, reason: HandOffReason): void;
  /**
   * A hand-off the coordinator started ended neither finished nor timed out: its owner
   * region went away first (`cause`, see HandOffAbandonCause). Once per hand-off.
   */
  handOffAbandoned?(
    typeName: string,
    shardId: string,
    node: string,
    reason: HandOffReason,
    cause: HandOffAbandonCause,
  ): void;
}

/**
 * Why a hand-off was abandoned: `member-removed` (the old home's member was removed from
 * the cluster, or replaced by a new incarnation), `member-unreachable` (shard leases: the
 * shards of an unreachable member were given new homes), `region-stopped` (the old home's
 * region reported that it stopped).
 */
export type HandOffAbandonCause = "member-removed" | "member-unreachable" | "region-stopped";

/** Every HandOffAbandonCause (bounded label values). */
export const HAND_OFF_ABANDON_CAUSES: readonly HandOffAbandonCause[] = [
  "member-removed",
  "member-unreachable",
  "region-stopped",
];

/** Why an entity was passivated (see ShardingLifecycleListener.entityPassivated). */
export type PassivationReason = Exclude<StopReason, "hand-off">;

/** What a region shows of itself while it runs (read on demand, not pushed). */
export interface RegionProbe {
  /** Messages the region holds now: shard home unknown, shard moving or starting. */
  readonly bufferedMessages: number;
  /**
   * Messages its shards hold now (summed over the shards running in this region): for an
   * entity that is starting or recovering, while the shard awaits its lease or recovers
   * its remembered entities (StartEntity requests included), and during a hand-off.
   * Counted apart from `bufferedMessages`: a message is in one of the two, never both.
   */
  readonly shardBufferedMessages: number;
}

/** What a shard shows of itself (read on demand by its region's RegionProbe). */
export interface ShardProbe {
  /** Messages the shard holds now (see RegionProbe.shardBufferedMessages). */
  readonly bufferedMessages: number;
}

/** The listener with its entity type and node bound: what one shard actor reports to. */
export interface ShardLifecycle {
  shardStarted(shardId: string): void;
  /** Reports `liveEntityIds` stopped, then the shard. */
  shardStopped(shardId: string, liveEntityIds: Iterable<string>): void;
  entityStarted(entityId: string, shardId: string): void;
  entityStopped(entityId: string, shardId: string): void;
  entityPassivated(entityId: string, shardId: string, reason: PassivationReason): void;
  regionStarted(probe: RegionProbe): void;
  regionStopped(probe: RegionProbe): void;
  shardHomeReceived(shardId: string, latencyMs: number): void;
  handOffCompleted(shardId: string, reason: HandOffReason, durationMs: number): void;
  handOffTimedOut(shardId: string, reason: HandOffReason): void;
  handOffAbandoned(shardId: string, reason: HandOffReason, cause: HandOffAbandonCause): void;
}

/** Binds `listener` to one entity type on one node (undefined when there is no listener). */
export function bindShardLifecycle(
  listener: ShardingLifecycleListener | undefined,
  typeName: string,
  node: string,
): ShardLifecycle | undefined {
  if (listener === undefined) return undefined;
  const call = (f: () => void) => {
    try {
      f();
    } catch {
      // a listener must not break the shard (see the module comment)
    }
  };
  return {
    shardStarted: (shardId) => call(() => listener.shardStarted?.(typeName, shardId, node)),
    shardStopped: (shardId, live) => {
      for (const id of [...live]) call(() => listener.entityStopped?.(typeName, id, node, shardId));
      call(() => listener.shardStopped?.(typeName, shardId, node));
    },
    entityStarted: (entityId, shardId) =>
      call(() => listener.entityStarted?.(typeName, entityId, node, shardId)),
    entityStopped: (entityId, shardId) =>
      call(() => listener.entityStopped?.(typeName, entityId, node, shardId)),
    entityPassivated: (entityId, shardId, reason) =>
      call(() => listener.entityPassivated?.(typeName, entityId, node, shardId, reason)),
    regionStarted: (probe) => call(() => listener.regionStarted?.(typeName, node, probe)),
    regionStopped: (probe) => call(() => listener.regionStopped?.(typeName, node, probe)),
    shardHomeReceived: (shardId, latencyMs) =>
      call(() => listener.shardHomeReceived?.(typeName, shardId, node, latencyMs)),
    handOffCompleted: (shardId, reason, durationMs) =>
      call(() => listener.handOffCompleted?.(typeName, shardId, node, reason, durationMs)),
    handOffTimedOut: (shardId, reason) =>
      call(() => listener.handOffTimedOut?.(typeName, shardId, node, reason)),
    handOffAbandoned: (shardId, reason, cause) =>
      call(() => listener.handOffAbandoned?.(typeName, shardId, node, reason, cause)),
  };
}
