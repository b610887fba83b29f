/**
 * Remember entities: the data the shard machine writes and the shape of the store the
 * driver writes it to (the port itself lives in src/ports; this file describes it so the
 * core stays free of I/O).
 *
 * Invariants the machine relies on:
 * - A batch names each entity id at most once (`started` and `stopped` are disjoint and
 *   without duplicates): the machine keeps at most one change per entity outstanding.
 * - Batches of one shard are written one at a time, in order; the next one is issued only
 *   after the previous one is acknowledged or reported failed.
 * - An update is atomic: after it resolves the whole batch is durable; after it rejects
 *   none of it may be assumed durable (a retry rewrites the same ids, so applying a batch
 *   twice must be harmless: add and remove are idempotent set operations).
 */
import { fail } from "../../base/assert.js";
import type { EntityId, ShardId } from "../sharding/shard-id.js";

/** One store write: entities that started (to remember) and stopped (to forget). */
export interface RememberEntitiesBatch {
  readonly started: readonly EntityId[];
  readonly stopped: readonly EntityId[];
}

/**
 * The store port the driver implements (the lead's src/ports file mirrors this). One
 * store serves every shard of every entity type; keys are (typeName, shardId).
 */
export interface RememberEntitiesStore {
  /** The remembered entity ids of one shard, in a stable order (empty when none). */
  getEntities(typeName: string, shardId: ShardId): Promise<readonly EntityId[]>;
  /**
   * Applies one batch atomically: adds `started`, removes `stopped`. Resolves once the
   * change is durable; rejects (or the driver times it out) when it may not be.
   */
  update(typeName: string, shardId: ShardId, batch: RememberEntitiesBatch): Promise<void>;
}

/** Asserts the batch invariant (each id at most once over started and stopped). */
export function assertValidBatch(batch: RememberEntitiesBatch): void {
  const seen = new Set<EntityId>();
  for (const id of [...batch.started, ...batch.stopped]) {
    if (seen.has(id)) fail(`remember batch names entity "${id}" twice`);
    seen.add(id);
  }
}

/**
 * The reference semantics of `update`: the remembered set after applying `batch`.
 * Used by the in-memory store and by tests as the model of every store.
 */
export function applyRememberBatch(
  remembered: ReadonlySet<EntityId>,
  batch: RememberEntitiesBatch,
): Set<EntityId> {
  const next = new Set(remembered);
  for (const id of batch.started) next.add(id);
  for (const id of batch.stopped) next.delete(id);
  return next;
}
