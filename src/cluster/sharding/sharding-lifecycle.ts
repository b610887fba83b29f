/**
 * An optional observer of where shards and entities run: each shard reports when it
 * starts and stops, and when it starts an entity and sees it terminate. The registry
 * oracle of `shardkit/testing` (ShardingOracle) is built on it; metrics could be too.
 *
 * `node` is the unique address of the reporting member (`protocol://system@host:port#uid`),
 * so two incarnations of one host are told apart. Calls happen inside the shard actor:
 * a listener must be quick; what it throws is swallowed so that it cannot break sharding.
 */

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
}

/** The listener with its entity type and node bound: what one shard actor reports to. */
export interface ShardLifecycle {
  shardStarted(shardId: string): void;
  /** Reports `liveEntityIds` stopped, then the shard. */
  shardStopped(shardId: string, liveEntityIds: Iterable<string>): void;
  entityStarted(entityId: string, shardId: string): void;
  entityStopped(entityId: string, shardId: string): void;
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
  };
}
