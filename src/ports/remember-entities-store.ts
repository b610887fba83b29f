/**
 * RememberEntitiesStore port: where sharding keeps, per shard, which entities to restart
 * after a rebalance, a crash, a coordinator fail-over or a full restart. The shard writes
 * batches of started/stopped entity ids (at most maxUpdatesPerWrite per batch) and treats
 * an entity as remembered only once its batch is acknowledged.
 */
import { ShardkitError } from "../base/errors.js";
import type { WriteFence } from "./journal.js";

export interface RememberEntitiesUpdate {
  /** Entities to remember. */
  readonly started: readonly string[];
  /** Entities to forget. An id appears at most once over both lists. */
  readonly stopped: readonly string[];
}

export interface RememberEntitiesStore {
  /** The remembered entity ids of one shard (empty when none). */
  getEntities(typeName: string, shardId: string): Promise<readonly string[]>;
  /**
   * Applies one batch atomically and idempotently; resolves once durable. With `fence`
   * (shard leases) a store on a fencing journal refuses the batch with FencedWriteError
   * when a newer holder of the shard's lease exists.
   */
  update(
    typeName: string,
    shardId: string,
    batch: RememberEntitiesUpdate,
    fence?: WriteFence,
  ): Promise<void>;
}

/** A batch that names one entity more than once (it would be ambiguous). */
export class InvalidRememberBatchError extends ShardkitError {
  constructor(entityId: string) {
    super("REMEMBER_BATCH_INVALID", `remember-entities batch names entity "${entityId}" twice`, {
      entityId,
    });
  }
}

/** @throws InvalidRememberBatchError when an id appears twice over started and stopped. */
export function assertRememberBatch(batch: RememberEntitiesUpdate): void {
  const seen = new Set<string>();
  for (const id of [...batch.started, ...batch.stopped]) {
    if (seen.has(id)) throw new InvalidRememberBatchError(id);
    seen.add(id);
  }
}
