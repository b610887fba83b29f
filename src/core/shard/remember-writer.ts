/**
 * The remember-entities write pipeline of one shard: changes (entity started / stopped)
 * queue up, and are written in batches of at most maxUpdatesPerWrite ids, one batch in
 * flight at a time, in the order the changes were made.
 *
 * One write at a time keeps the store's view a prefix of the machine's decisions, and
 * gives the next batch everything that queued up while the previous one was in flight
 * (so a busy shard writes few large batches, an idle one small prompt ones). At most one
 * change per entity is outstanding (pending or in flight): the machine waits for an
 * entity's change to be acknowledged before it can make the next one.
 */
import { assert, fail } from "../../base/assert.js";
import type { EntityId } from "../sharding/shard-id.js";
import type { RememberEntitiesBatch } from "./remember-entities.js";

/** A remember change of one entity. */
export type RememberChange = "started" | "stopped";

/** A batch handed to the store, with the id its ack or failure refers to. */
export interface RememberWrite {
  readonly batchId: number;
  readonly batch: RememberEntitiesBatch;
}

/** Queue of remember changes and the one write in flight. */
export class RememberWriter {
  private pending = new Map<EntityId, RememberChange>();
  private inFlight: RememberWrite | undefined;
  private nextBatchId = 1;

  constructor(private readonly maxUpdatesPerWrite: number) {
    assert(maxUpdatesPerWrite >= 1, "maxUpdatesPerWrite must be >= 1");
  }

  /** Nothing queued and nothing in flight. */
  get idle(): boolean {
    return this.inFlight === undefined && this.pending.size === 0;
  }

  /** The write awaiting its ack, if any. */
  get writing(): RememberWrite | undefined {
    return this.inFlight;
  }

  /** Changes not yet handed to the store. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /** Queues a change; the entity must have no change outstanding. */
  enqueue(entityId: EntityId, change: RememberChange): void {
    if (this.outstanding(entityId)) fail(`entity "${entityId}" already has a remember change`);
    this.pending.set(entityId, change);
  }

  /** True when the entity has a change queued or in flight. */
  outstanding(entityId: EntityId): boolean {
    if (this.pending.has(entityId)) return true;
    const w = this.inFlight;
    return (
      w !== undefined && (w.batch.started.includes(entityId) || w.batch.stopped.includes(entityId))
    );
  }

  /** The next write to issue (and marks it in flight), or undefined when busy or empty. */
  next(): RememberWrite | undefined {
    if (this.inFlight !== undefined || this.pending.size === 0) return undefined;
    const started: EntityId[] = [];
    const stopped: EntityId[] = [];
    for (const [id, change] of this.pending) {
      if (started.length + stopped.length >= this.maxUpdatesPerWrite) break;
      (change === "started" ? started : stopped).push(id);
      this.pending.delete(id);
    }
    this.inFlight = { batchId: this.nextBatchId++, batch: { started, stopped } };
    return this.inFlight;
  }

  /** Completes the write `batchId`; returns its batch, or undefined if not in flight. */
  ack(batchId: number): RememberEntitiesBatch | undefined {
    const w = this.inFlight;
    if (w === undefined || w.batchId !== batchId) return undefined;
    this.inFlight = undefined;
    return w.batch;
  }

  /**
   * Fails the write `batchId`. With `requeue` its changes go back to the front of the
   * queue (to be rewritten first); otherwise they are dropped. Returns the batch, or
   * undefined if `batchId` is not in flight.
   */
  fail(batchId: number, requeue: boolean): RememberEntitiesBatch | undefined {
    const w = this.inFlight;
    if (w === undefined || w.batchId !== batchId) return undefined;
    this.inFlight = undefined;
    if (requeue) {
      const front = new Map<EntityId, RememberChange>();
      for (const id of w.batch.started) front.set(id, "started");
      for (const id of w.batch.stopped) front.set(id, "stopped");
      for (const [id, change] of this.pending) front.set(id, change);
      this.pending = front;
    }
    return w.batch;
  }

  /** Forgets everything (a late ack of the abandoned write is then ignored). */
  abandon(): void {
    this.pending.clear();
    this.inFlight = undefined;
  }
}
