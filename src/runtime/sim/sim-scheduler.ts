/**
 * A simulated node's Scheduler: timers and deferred callbacks become events in the
 * world's queue, in world time.
 *
 * - `schedule(d)` converts the local delay d into world time through the node's
 *   drifting clock (see sim-clock.ts), clamping negative delays to 0.
 * - `defer` enqueues at the current world time, i.e. after every event already queued
 *   for that time; `schedule(0)` does the same, so the two run in call order.
 * - `liveTimers` / `pendingDeferred` count callbacks not yet run or cancelled (leak
 *   checks); `cancelAll` drops everything the node has pending (e.g. when it crashes).
 * - A delay of `Infinity` never fires: nothing is queued or counted.
 */
import { assert } from "../../base/assert.js";
import { type Disposable, noopDisposable } from "../../base/disposable.js";
import type { Scheduler } from "../../ports/scheduler.js";
import type { SimClock } from "./sim-clock.js";

/** What a node scheduler needs from the world. */
export interface SimEventHost {
  readonly now: number;
  /** Queues `fn` at world time `timeMs` (>= now). */
  scheduleAt(timeMs: number, fn: () => void): Disposable;
}

/** Scheduler of one simulated node. */
export class SimScheduler implements Scheduler {
  private readonly timers = new Set<SimTask>();
  private readonly deferred = new Set<SimTask>();

  constructor(
    private readonly host: SimEventHost,
    private readonly clock: SimClock,
  ) {}

  /** Scheduled callbacks that have neither run nor been cancelled. */
  get liveTimers(): number {
    return this.timers.size;
  }

  /** Deferred callbacks that have not run yet. */
  get pendingDeferred(): number {
    return this.deferred.size;
  }

  schedule(delayMs: number, fn: () => void): Disposable {
    assert(!Number.isNaN(delayMs), "schedule delay must not be NaN");
    if (delayMs === Number.POSITIVE_INFINITY) return noopDisposable;
    const at = this.clock.worldTimeAfter(Math.max(0, delayMs));
    return this.enqueue(this.timers, at, fn);
  }

  defer(fn: () => void): void {
    this.enqueue(this.deferred, this.host.now, fn);
  }

  /** Cancels every pending timer and deferred callback of this node. */
  cancelAll(): void {
    for (const task of [...this.timers, ...this.deferred]) task.dispose();
  }

  private enqueue(owner: Set<SimTask>, atMs: number, fn: () => void): SimTask {
    const task = new SimTask(owner, fn);
    owner.add(task);
    task.event = this.host.scheduleAt(atMs, () => task.run());
    return task;
  }
}

/** One pending callback; removes itself from its owner's set when run or cancelled. */
class SimTask implements Disposable {
  event: Disposable = noopDisposable;

  constructor(
    private readonly owner: Set<SimTask>,
    private readonly fn: () => void,
  ) {}

  run(): void {
    this.owner.delete(this);
    this.fn();
  }

  dispose(): void {
    if (this.owner.delete(this)) this.event.dispose();
  }
}
