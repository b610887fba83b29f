/**
 * In-memory RememberEntitiesStore: the reference implementation (tests, simulator, and
 * sharding without a database). Survives shard moves and crashes inside one process,
 * not a restart of that process.
 */
import {
  assertRememberBatch,
  type RememberEntitiesStore,
  type RememberEntitiesUpdate,
} from "../../ports/remember-entities-store.js";

export { InvalidRememberBatchError } from "../../ports/remember-entities-store.js";

export class MemoryRememberEntitiesStore implements RememberEntitiesStore {
  private readonly shards = new Map<string, Set<string>>();

  async getEntities(typeName: string, shardId: string): Promise<readonly string[]> {
    return [...(this.shards.get(keyOf(typeName, shardId)) ?? [])].sort();
  }

  async update(typeName: string, shardId: string, batch: RememberEntitiesUpdate): Promise<void> {
    assertRememberBatch(batch);
    const k = keyOf(typeName, shardId);
    const set = this.shards.get(k) ?? new Set<string>();
    for (const id of batch.started) set.add(id);
    for (const id of batch.stopped) set.delete(id);
    if (set.size === 0) this.shards.delete(k);
    else this.shards.set(k, set);
  }
}

function keyOf(typeName: string, shardId: string): string {
  return `${typeName}\u0000${shardId}`;
}
