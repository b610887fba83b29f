/**
 * The region's per-shard FIFO buffers and their running total. A shard has a buffer only
 * while it holds messages, so "has a buffer" means "newer messages must queue behind":
 * the region never delivers a message for a shard while older ones wait (per-sender,
 * per-entity order). Leftovers handed back by a stopping local shard go to the front,
 * ahead of messages that arrived after them. The bound is the caller's business
 * (region-machine.ts checks bufferSizeMax before `push`).
 */
import { Deque } from "../../base/deque.js";
import type { ShardId } from "../sharding/shard-id.js";
import type { RegionEnvelope } from "./region-types.js";

/** Per-shard buffers with a total count. */
export class ShardBuffers<M> {
  private readonly byShard = new Map<ShardId, Deque<RegionEnvelope<M>>>();
  private count = 0;

  /** Messages held over all shards. */
  get total(): number {
    return this.count;
  }

  /** True while `shard` holds messages. */
  has(shard: ShardId): boolean {
    return this.byShard.has(shard);
  }

  /** Messages held for `shard`. */
  sizeOf(shard: ShardId): number {
    return this.byShard.get(shard)?.length ?? 0;
  }

  /** Shards holding messages, in the order their buffers were created. */
  shards(): ShardId[] {
    return [...this.byShard.keys()];
  }

  /** True if some shard holding messages satisfies `predicate`. */
  some(predicate: (shard: ShardId) => boolean): boolean {
    for (const shard of this.byShard.keys()) if (predicate(shard)) return true;
    return false;
  }

  /** Appends `envelope` behind everything held for `shard`. */
  push(shard: ShardId, envelope: RegionEnvelope<M>): void {
    let q = this.byShard.get(shard);
    if (q === undefined) {
      q = new Deque();
      this.byShard.set(shard, q);
    }
    q.push(envelope);
    this.count++;
  }

  /** Puts `envelopes` (oldest first) in front of everything held for `shard`. */
  prepend(shard: ShardId, envelopes: readonly RegionEnvelope<M>[]): void {
    if (envelopes.length === 0) return;
    let q = this.byShard.get(shard);
    if (q === undefined) {
      q = new Deque();
      this.byShard.set(shard, q);
    }
    for (let i = envelopes.length - 1; i >= 0; i--) q.unshift(envelopes[i] as RegionEnvelope<M>);
    this.count += envelopes.length;
  }

  /** Removes and returns everything held for `shard`, oldest first. */
  take(shard: ShardId): RegionEnvelope<M>[] {
    const q = this.byShard.get(shard);
    if (q === undefined) return [];
    this.byShard.delete(shard);
    this.count -= q.length;
    return [...q];
  }
}
