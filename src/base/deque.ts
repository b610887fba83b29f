/**
 * A growable FIFO ring buffer. O(1) push/shift without the O(n) cost of Array.shift;
 * used by the dispatcher's ready queue and other hot queues.
 *
 * The ring is allocated on the first push, not by the constructor: a connection holds
 * about ten queues, most of them empty for its whole life, and a simulated 1 000-member
 * cluster holds tens of thousands of connections (docs/cluster-scale.md, "Session 18").
 */
export class Deque<T> {
  private buf: (T | undefined)[] = NO_SLOTS as (T | undefined)[];
  private head = 0;
  private count = 0;
  /** Slots of the first ring (a power of two). */
  private readonly firstCapacity: number;

  constructor(initialCapacity = 16) {
    let cap = 1;
    while (cap < initialCapacity) cap <<= 1;
    this.firstCapacity = cap;
  }

  get length(): number {
    return this.count;
  }

  push(item: T): void {
    if (this.count === this.buf.length) this.grow();
    this.buf[(this.head + this.count) & (this.buf.length - 1)] = item;
    this.count++;
  }

  /** Adds to the front (next to be shifted). */
  unshift(item: T): void {
    if (this.count === this.buf.length) this.grow();
    this.head = (this.head - 1) & (this.buf.length - 1);
    this.buf[this.head] = item;
    this.count++;
  }

  shift(): T | undefined {
    if (this.count === 0) return undefined;
    const item = this.buf[this.head];
    this.buf[this.head] = undefined;
    this.head = (this.head + 1) & (this.buf.length - 1);
    this.count--;
    return item;
  }

  peek(): T | undefined {
    return this.count === 0 ? undefined : this.buf[this.head];
  }

  clear(): void {
    this.buf.fill(undefined);
    this.head = 0;
    this.count = 0;
  }

  *[Symbol.iterator](): IterableIterator<T> {
    for (let i = 0; i < this.count; i++)
      yield this.buf[(this.head + i) & (this.buf.length - 1)] as T;
  }

  private grow(): void {
    const old = this.buf;
    const next = new Array<T | undefined>(old.length === 0 ? this.firstCapacity : old.length * 2);
    for (let i = 0; i < this.count; i++) next[i] = old[(this.head + i) & (old.length - 1)];
    this.buf = next;
    this.head = 0;
  }
}

/** The ring of every deque before its first push (never written: a push grows it first). */
const NO_SLOTS: readonly unknown[] = Object.freeze([]);
