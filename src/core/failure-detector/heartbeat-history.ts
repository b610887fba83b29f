/**
 * Sliding window of heartbeat inter-arrival intervals for the phi accrual failure
 * detector. Holds at most `maxSampleSize` intervals; when full, appending drops the
 * OLDEST interval first. Keeps a running sum and sum of squares so mean and variance are
 * O(1) per heartbeat (heartbeats arrive every second from every monitored peer). The
 * sums are recomputed from the window each time the ring wraps around (amortised O(1)),
 * so the rounding error of subtracting evicted fractional intervals cannot accumulate
 * over a long-lived connection.
 *
 * Invariants: `size <= maxSampleSize`; `sum`/`squaredSum` are the sums over exactly the
 * intervals in the window. Variance is the POPULATION variance (divide by n), clamped at 0
 * so floating-point cancellation can never yield a NaN standard deviation.
 */
import { fail } from "../../base/assert.js";

/** Bounded window of heartbeat intervals with O(1) mean and population variance. */
export class HeartbeatHistory {
  /** Capacity of the window. */
  readonly maxSampleSize: number;
  private readonly ring: number[] = [];
  private head = 0;
  private sum = 0;
  private squaredSum = 0;

  constructor(maxSampleSize: number) {
    if (!(Number.isInteger(maxSampleSize) && maxSampleSize >= 1))
      fail(`maxSampleSize must be a positive integer, got ${maxSampleSize}`);
    this.maxSampleSize = maxSampleSize;
  }

  /** Number of intervals in the window. */
  get size(): number {
    return this.ring.length;
  }

  /** Appends an interval (ms), dropping the oldest one when the window is full. */
  add(intervalMs: number): void {
    if (this.ring.length < this.maxSampleSize) {
      this.ring.push(intervalMs);
    } else {
      const dropped = this.ring[this.head] as number;
      this.sum -= dropped;
      this.squaredSum -= dropped * dropped;
      this.ring[this.head] = intervalMs;
      this.head = (this.head + 1) % this.maxSampleSize;
      if (this.head === 0) {
        this.recomputeSums();
        return;
      }
    }
    this.sum += intervalMs;
    this.squaredSum += intervalMs * intervalMs;
  }

  private recomputeSums(): void {
    let sum = 0;
    let squaredSum = 0;
    for (const x of this.ring) {
      sum += x;
      squaredSum += x * x;
    }
    this.sum = sum;
    this.squaredSum = squaredSum;
  }

  /** Mean interval (ms). Undefined (NaN) for an empty window; never queried then. */
  get mean(): number {
    return this.sum / this.ring.length;
  }

  /** Population variance (ms^2): sumOfSquares / n - mean^2, never below 0. */
  get variance(): number {
    const m = this.mean;
    return Math.max(0, this.squaredSum / this.ring.length - m * m);
  }

  /** Population standard deviation (ms). */
  get stdDeviation(): number {
    return Math.sqrt(this.variance);
  }

  /** The intervals in the window, oldest first (a copy). */
  intervals(): number[] {
    return [...this.ring.slice(this.head), ...this.ring.slice(0, this.head)];
  }
}
