/**
 * The simulator's event queue: a binary min-heap ordered by (time, seq).
 *
 * Invariants:
 * - `seq` is assigned from one counter at insertion and never reused, so events due
 *   at the same time run in insertion order. Together with a seeded PRNG this makes
 *   the order of a whole simulation a pure function of its inputs.
 * - Cancellation marks the event (lazy deletion); cancelled events are skipped when
 *   they reach the top. `size` counts live events only.
 * - When cancelled events outnumber live ones the heap is rebuilt, so a workload that
 *   schedules and cancels many long timers (ask timeouts) does not grow without bound.
 */
import { assert } from "../../base/assert.js";
import type { Disposable } from "../../base/disposable.js";

/** A queued event. Disposing it cancels it (no-op once it ran or was cancelled). */
export interface QueuedEvent<T> extends Disposable {
  readonly time: number;
  readonly seq: number;
  readonly item: T;
}

const QUEUED = 0;
const CANCELLED = 1;
const DONE = 2;
type EntryState = typeof QUEUED | typeof CANCELLED | typeof DONE;

/** Minimum number of cancelled entries before a rebuild is considered. */
const COMPACT_CANCELLED_MIN = 64;

class Entry<T> implements QueuedEvent<T> {
  state: EntryState = QUEUED;
  constructor(
    readonly owner: EventQueue<T>,
    readonly time: number,
    readonly seq: number,
    readonly item: T,
  ) {}

  dispose(): void {
    this.owner.cancel(this);
  }
}

function before<T>(a: Entry<T>, b: Entry<T>): boolean {
  return a.time < b.time || (a.time === b.time && a.seq < b.seq);
}

/** Min-heap of events by (time, insertion order) with lazy cancellation. */
export class EventQueue<T> {
  private heap: Entry<T>[] = [];
  private nextSeq = 0;
  private live = 0;

  /** Number of live (not cancelled, not yet popped) events. */
  get size(): number {
    return this.live;
  }

  /** Adds an event due at `time`; ties with queued events go after them. */
  push(time: number, item: T): QueuedEvent<T> {
    assert(!Number.isNaN(time), "event time must not be NaN");
    const entry = new Entry(this, time, this.nextSeq++, item);
    this.heap.push(entry);
    this.siftUp(this.heap.length - 1);
    this.live++;
    return entry;
  }

  /** Cancels a queued event. Returns false when it already ran or was cancelled. */
  cancel(event: QueuedEvent<T>): boolean {
    const entry = event as Entry<T>;
    assert(entry.owner === this, "event belongs to another queue");
    if (entry.state !== QUEUED) return false;
    entry.state = CANCELLED;
    this.live--;
    this.maybeCompact();
    return true;
  }

  /** Due time of the next live event, or undefined when empty. */
  peekTime(): number | undefined {
    this.dropCancelledTop();
    return this.heap[0]?.time;
  }

  /** Removes and returns the next live event, or undefined when empty. */
  pop(): QueuedEvent<T> | undefined {
    this.dropCancelledTop();
    const top = this.removeTop();
    if (top === undefined) return undefined;
    top.state = DONE;
    this.live--;
    return top;
  }

  private dropCancelledTop(): void {
    while (this.heap[0] !== undefined && this.heap[0].state === CANCELLED) this.removeTop();
  }

  private removeTop(): Entry<T> | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (top === undefined || last === undefined) return undefined;
    if (heap.length > 0) {
      heap[0] = last;
      this.siftDown(0);
    }
    return top;
  }

  private maybeCompact(): void {
    const cancelled = this.heap.length - this.live;
    if (cancelled < COMPACT_CANCELLED_MIN || cancelled <= this.live) return;
    this.heap = this.heap.filter((entry) => entry.state === QUEUED);
    for (let i = (this.heap.length >>> 1) - 1; i >= 0; i--) this.siftDown(i);
  }

  private siftUp(index: number): void {
    const heap = this.heap;
    const entry = heap[index]!;
    let i = index;
    while (i > 0) {
      const parentIndex = (i - 1) >>> 1;
      const parent = heap[parentIndex]!;
      if (!before(entry, parent)) break;
      heap[i] = parent;
      i = parentIndex;
    }
    heap[i] = entry;
  }

  private siftDown(index: number): void {
    const heap = this.heap;
    const n = heap.length;
    const entry = heap[index]!;
    let i = index;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      const child = right < n && before(heap[right]!, heap[left]!) ? right : left;
      if (!before(heap[child]!, entry)) break;
      heap[i] = heap[child]!;
      i = child;
    }
    heap[i] = entry;
  }
}
