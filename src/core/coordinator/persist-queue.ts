/**
 * The coordinator's pending-persist queue: events wait here, in decision order, until the
 * store acknowledges them. At most ONE batch is being written at a time; events decided
 * meanwhile queue behind it and go out together as the next batch (group commit), so the
 * journal order is exactly the decision order and a failed batch is retried before
 * anything decided after it.
 *
 * A failed write is retried after a backoff that doubles per consecutive failure
 * (persistRetryBackoffMs .. persistRetryBackoffMaxMs), with the same batch id and the
 * same events; `failing` stays true until a write succeeds.
 *
 * Bound: the queue only holds events the machine decided, which are bounded by the number
 * of registered regions and proxies plus the waiting shards (waitingShardsMax), because
 * the machine starts no new allocation while a write is failing.
 */
import { Deque } from "../../base/deque.js";
import type { CoordinatorEvent } from "../../protocol/sharding.js";

/** One queued event and what to announce once it is durable. */
export interface PendingEvent {
  readonly event: CoordinatorEvent;
  /** shard-home-allocated only: send HostShard to the owner (false for reported shards). */
  readonly hostShard: boolean;
}

/** A batch handed to the driver. */
export interface PersistBatch {
  readonly batchId: number;
  readonly entries: readonly PendingEvent[];
}

/** Settings the queue needs. */
export interface PersistQueueLimits {
  readonly persistBatchMax: number;
  readonly persistRetryBackoffMs: number;
  readonly persistRetryBackoffMaxMs: number;
}

/** See the module comment. */
export class PersistQueue {
  private readonly waiting = new Deque<PendingEvent>();
  /** The batch being written, or waiting to be written again after a failure. */
  private current: PersistBatch | undefined;
  /** True while `current` is with the driver (false while backing off). */
  private writing = false;
  private consecutiveFailures = 0;
  private nextBatchId = 1;

  constructor(private readonly limits: PersistQueueLimits) {}

  /** Events not yet durable (queued plus the current batch). */
  get size(): number {
    return this.waiting.length + (this.current?.entries.length ?? 0);
  }

  /** True from a failed write until the next successful one. */
  get failing(): boolean {
    return this.consecutiveFailures > 0;
  }

  /** The batch being written or retried, if any. */
  get inFlight(): PersistBatch | undefined {
    return this.current;
  }

  /** The id of the batch with the driver now (not one waiting to be retried), if any. */
  get writingBatchId(): number | undefined {
    return this.writing ? this.current?.batchId : undefined;
  }

  enqueue(entry: PendingEvent): void {
    this.waiting.push(entry);
  }

  /** The next batch to write, when none is in flight and events are waiting. */
  takeBatchToWrite(): PersistBatch | undefined {
    if (this.current !== undefined || this.waiting.length === 0) return undefined;
    const entries: PendingEvent[] = [];
    while (entries.length < this.limits.persistBatchMax && this.waiting.length > 0)
      entries.push(this.waiting.shift() as PendingEvent);
    this.current = { batchId: this.nextBatchId++, entries };
    this.writing = true;
    return this.current;
  }

  /** The completed batch, or undefined when `batchId` is not the batch being written. */
  onPersisted(batchId: number): PersistBatch | undefined {
    const batch = this.current;
    if (batch === undefined || !this.writing || batch.batchId !== batchId) return undefined;
    this.current = undefined;
    this.writing = false;
    this.consecutiveFailures = 0;
    return batch;
  }

  /** The backoff before the retry, or undefined when `batchId` is not being written. */
  onFailed(batchId: number): number | undefined {
    const batch = this.current;
    if (batch === undefined || !this.writing || batch.batchId !== batchId) return undefined;
    this.writing = false;
    this.consecutiveFailures++;
    const { persistRetryBackoffMs: min, persistRetryBackoffMaxMs: max } = this.limits;
    const exp = Math.min(this.consecutiveFailures - 1, 30);
    return Math.min(max, min * 2 ** exp);
  }

  /** The batch to write again when the retry timer fires (undefined if none waits). */
  onRetryTimer(): PersistBatch | undefined {
    if (this.current === undefined || this.writing) return undefined;
    this.writing = true;
    return this.current;
  }
}
