/**
 * RememberEntitiesStore port: where sharding keeps, per shard, which entities to restart
 * after a rebalance, a crash, a coordinator fail-over or a full restart. The shard writes
 * batches of started/stopped entity ids (at most maxUpdatesPerWrite per batch) and treats
 * an entity as remembered only once its batch is acknowledged.
 */
export interface RememberEntitiesUpdate {
  /** Entities to remember. */
  readonly started: readonly string[];
  /** Entities to forget. An id appears at most once over both lists. */
  readonly stopped: readonly string[];
}

export interface RememberEntitiesStore {
  /** The remembered entity ids of one shard (empty when none). */
  getEntities(typeName: string, shardId: string): Promise<readonly string[]>;
  /** Applies one batch atomically and idempotently; resolves once durable. */
  update(typeName: string, shardId: string, batch: RememberEntitiesUpdate): Promise<void>;
}
