/**
 * GetShardHome requests the coordinator cannot answer yet (the shard is being allocated,
 * handed off, or allocation is deferred), per shard, in arrival order. All requesters of
 * a shard get its home in one go once it is durable.
 *
 * Bound (docs/architecture.md, house rule 1): at most `waitingShardsMax` distinct shards
 * wait. A request for one more shard is refused (`add` returns false); the caller logs and
 * counts it and the region asks again after its retry interval. Requesters per shard are
 * bounded by the registered regions and proxies.
 */
import type { RegionId } from "../../protocol/sharding.js";
import type { ShardId } from "../sharding/shard-id.js";

/** See the module comment. */
export class WaitingRequests {
  private readonly byShard = new Map<ShardId, Set<RegionId>>();

  constructor(private readonly waitingShardsMax: number) {}

  /** Number of shards with waiting requesters. */
  get size(): number {
    return this.byShard.size;
  }

  has(shard: ShardId): boolean {
    return this.byShard.has(shard);
  }

  /** Adds `from` as a requester of `shard`; false when the bound refuses a new shard. */
  add(shard: ShardId, from: RegionId): boolean {
    const set = this.byShard.get(shard);
    if (set !== undefined) {
      set.add(from);
      return true;
    }
    if (this.byShard.size >= this.waitingShardsMax) return false;
    this.byShard.set(shard, new Set([from]));
    return true;
  }

  /** The requesters of `shard` in arrival order (they stop waiting). */
  take(shard: ShardId): RegionId[] {
    const set = this.byShard.get(shard);
    this.byShard.delete(shard);
    return set === undefined ? [] : [...set];
  }

  /** The first requester of `shard`, if any. */
  firstRequester(shard: ShardId): RegionId | undefined {
    const set = this.byShard.get(shard);
    return set === undefined ? undefined : (set.values().next().value as RegionId | undefined);
  }

  /** Waiting shards in arrival order (a copy, safe to iterate while changing). */
  shards(): ShardId[] {
    return [...this.byShard.keys()];
  }

  /** A terminated region or proxy no longer waits for anything. */
  removeRequester(region: RegionId): void {
    for (const [shard, set] of this.byShard) {
      set.delete(region);
      if (set.size === 0) this.byShard.delete(shard);
    }
  }
}
