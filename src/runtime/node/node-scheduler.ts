/**
 * The real Scheduler: `setTimeout` for delays, `setImmediate` for `defer`.
 *
 * Invariants:
 * - Every scheduled callback runs at most once; disposing its handle before it runs
 *   cancels it, disposing afterwards (or twice) is a no-op.
 * - `liveTimers` counts callbacks scheduled and not yet run or cancelled, so tests can
 *   assert that nothing leaks (docs/architecture.md, house rule 5).
 * - Delays longer than Node's timer limit (2^31-1 ms; Node would otherwise fire them
 *   after 1 ms with a warning) are split into chained timers.
 * - A delay of `Infinity` never fires: no timer is created and nothing is counted.
 *
 * Timers keep the process alive unless `unrefTimers` is set: a cluster node with
 * pending work should not exit silently.
 */
import { assert } from "../../base/assert.js";
import { type Disposable, noopDisposable } from "../../base/disposable.js";
import type { Scheduler } from "../../ports/scheduler.js";

/** Options of {@link NodeScheduler}. */
export interface NodeSchedulerOptions {
  /** Unref every timer so pending timers do not keep the process alive. Default false. */
  readonly unrefTimers?: boolean;
}

/** Node's maximum setTimeout delay; longer delays are chained. */
export const NODE_TIMER_DELAY_MAX_MS = 2 ** 31 - 1;

type TimerHandle = ReturnType<typeof setTimeout>;

/** Scheduler on Node's real timers. */
export class NodeScheduler implements Scheduler, Disposable {
  private readonly live = new Set<NodeTimer>();
  private readonly unrefTimers: boolean;

  constructor(options: NodeSchedulerOptions = {}) {
    this.unrefTimers = options.unrefTimers ?? false;
  }

  /** Callbacks scheduled with `schedule` that have neither run nor been cancelled. */
  get liveTimers(): number {
    return this.live.size;
  }

  schedule(delayMs: number, fn: () => void): Disposable {
    assert(!Number.isNaN(delayMs), "schedule delay must not be NaN");
    if (delayMs === Number.POSITIVE_INFINITY) return noopDisposable;
    const timer = new NodeTimer(Math.max(0, delayMs), fn, this.unrefTimers, this.live);
    this.live.add(timer);
    timer.start();
    return timer;
  }

  defer(fn: () => void): void {
    setImmediate(fn);
  }

  /** Cancels every live timer (deferred callbacks are not cancellable). */
  dispose(): void {
    for (const timer of [...this.live]) timer.dispose();
  }
}

/** One scheduled callback, possibly spanning several chained setTimeout calls. */
class NodeTimer implements Disposable {
  private handle: TimerHandle | undefined;
  private remainingMs: number;

  constructor(
    delayMs: number,
    private readonly fn: () => void,
    private readonly unref: boolean,
    private readonly live: Set<NodeTimer>,
  ) {
    this.remainingMs = delayMs;
  }

  start(): void {
    const chunkMs = Math.min(this.remainingMs, NODE_TIMER_DELAY_MAX_MS);
    this.remainingMs -= chunkMs;
    this.handle = setTimeout(() => this.onTimeout(), chunkMs);
    if (this.unref) this.handle.unref();
  }

  dispose(): void {
    if (!this.live.delete(this)) return;
    clearTimeout(this.handle);
    this.handle = undefined;
  }

  private onTimeout(): void {
    if (this.remainingMs > 0) {
      this.start();
      return;
    }
    this.handle = undefined;
    this.live.delete(this);
    this.fn();
  }
}
