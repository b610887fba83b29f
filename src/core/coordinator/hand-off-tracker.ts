/**
 * Hand-offs in progress (rebalance and graceful shutdown use the same protocol):
 *   begin    — BeginHandOff went to every region and proxy; waiting for all their acks
 *              (a region or proxy that terminates meanwhile counts as having acked);
 *   hand-off — HandOff went to the owner; waiting for its ShardStopped.
 * A ShardStopped ends the record (the machine then persists the deallocation); a timeout
 * or the owner's termination drops it.
 *
 * Every attempt gets a fresh `id` (echoed by the regions), and acks and ShardStopped are
 * only accepted for the current attempt of that shard, from the expected sender, in the
 * expected phase. A late reply to an aborted attempt therefore changes nothing.
 */
import type { RegionId } from "../../protocol/sharding.js";
import type { ShardId } from "../sharding/shard-id.js";

/** Why a shard is being handed off. */
export type HandOffReason = "rebalance" | "shutdown";

/** One hand-off attempt. */
export interface HandOffRecord {
  readonly id: number;
  readonly shard: ShardId;
  readonly owner: RegionId;
  readonly reason: HandOffReason;
  readonly startedAtMs: number;
  phase: "begin" | "hand-off";
  /** Regions and proxies whose BeginHandOffAck is still missing. */
  readonly pendingAcks: Set<RegionId>;
}

/** What an acknowledgement did. */
export type AckOutcome = "ignored" | "pending" | "all-acked";

/** See the module comment. */
export class HandOffTracker {
  private readonly records = new Map<ShardId, HandOffRecord>();
  private nextId = 1;

  get size(): number {
    return this.records.size;
  }

  has(shard: ShardId): boolean {
    return this.records.has(shard);
  }

  get(shard: ShardId): HandOffRecord | undefined {
    return this.records.get(shard);
  }

  /** All records, oldest first. */
  all(): Iterable<HandOffRecord> {
    return this.records.values();
  }

  /** Shards being handed off (a new set). */
  shards(): Set<ShardId> {
    return new Set(this.records.keys());
  }

  /** Starts a new attempt; the caller has checked that none runs for `shard`. */
  start(
    shard: ShardId,
    owner: RegionId,
    recipients: Iterable<RegionId>,
    reason: HandOffReason,
    nowMs: number,
  ): HandOffRecord {
    const record: HandOffRecord = {
      id: this.nextId++,
      shard,
      owner,
      reason,
      startedAtMs: nowMs,
      phase: "begin",
      pendingAcks: new Set(recipients),
    };
    this.records.set(shard, record);
    return record;
  }

  /** Records `from`'s BeginHandOffAck; "all-acked" moves the record to phase hand-off. */
  ack(shard: ShardId, handOffId: number, from: RegionId): AckOutcome {
    const r = this.records.get(shard);
    if (r === undefined || r.id !== handOffId || r.phase !== "begin") return "ignored";
    if (!r.pendingAcks.delete(from)) return "ignored";
    return this.maybeAllAcked(r) ? "all-acked" : "pending";
  }

  /** The finished record when this is the owner's ShardStopped for the current attempt. */
  stopped(shard: ShardId, handOffId: number, from: RegionId): HandOffRecord | undefined {
    const r = this.records.get(shard);
    if (r === undefined || r.id !== handOffId || r.phase !== "hand-off" || r.owner !== from)
      return undefined;
    this.records.delete(shard);
    return r;
  }

  /** Drops the record of `shard` (timeout, owner gone). */
  remove(shard: ShardId): HandOffRecord | undefined {
    const r = this.records.get(shard);
    this.records.delete(shard);
    return r;
  }

  /**
   * A region or proxy is gone: hand-offs it owned are dropped (`dropped`), and its missing
   * acks count as given (`allAcked`: records that have now moved to phase hand-off).
   */
  regionGone(region: RegionId): { dropped: HandOffRecord[]; allAcked: HandOffRecord[] } {
    const dropped: HandOffRecord[] = [];
    const allAcked: HandOffRecord[] = [];
    for (const r of [...this.records.values()]) {
      if (r.owner === region) {
        this.records.delete(r.shard);
        dropped.push(r);
      } else if (r.phase === "begin" && r.pendingAcks.delete(region) && this.maybeAllAcked(r)) {
        allAcked.push(r);
      }
    }
    return { dropped, allAcked };
  }

  private maybeAllAcked(r: HandOffRecord): boolean {
    if (r.pendingAcks.size > 0) return false;
    r.phase = "hand-off";
    return true;
  }
}
