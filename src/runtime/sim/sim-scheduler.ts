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
 * - `pauseUntil(t)` freezes the node like SIGSTOP: every callback due before world time
 *   t runs at t instead, in its original order (a frozen process runs nothing, then
 *   catches up on its overdue timers).
 * - `stall(ms)` models a blocked event loop (a long GC, a synchronous burst, a starved
 *   CPU): no timer or deferred callback of this node runs until the stall ends; what
 *   fell due meanwhile runs then, in its order. As the node's EventLoopMonitor
 *   (src/ports/event-loop.ts) it reports the longest stall since the last question.
 *   (Stopping the node's network input as well is the caller's part: the test harness
 *   clogs the links into the node for the same time.)
 */
import { assert, fail } from "../../base/assert.js";
import { type Disposable, noopDisposable } from "../../base/disposable.js";
import type { EventLoopMonitor } from "../../ports/event-loop.js";
import type { Scheduler } from "../../ports/scheduler.js";
import type { SimClock } from "./sim-clock.js";

/** What a node scheduler needs from the world. */
export interface SimEventHost {
  readonly now: number;
  /** Queues `fn` at world time `timeMs` (>= now). */
  scheduleAt(timeMs: number, fn: () => void): Disposable;
}

/** Scheduler of one simulated node. */
export class SimScheduler implements Scheduler, EventLoopMonitor {
  private readonly timers = new Set<SimTask>();
  private readonly deferred = new Set<SimTask>();
  private pausedUntil = Number.NEGATIVE_INFINITY;
  private stalledUntil = 0;
  private stallStartedAt = 0;
  private maxStallMs = 0;

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

  /** SIGSTOP until world time `worldMs` (see the module comment). */
  pauseUntil(worldMs: number): void {
    if (worldMs > this.pausedUntil) this.pausedUntil = worldMs;
  }

  /** True while paused. */
  get paused(): boolean {
    return this.host.now < this.pausedUntil;
  }

  /** Blocks this node's callbacks for `durationMs` world-ms from now (see the module comment). */
  stall(durationMs: number): void {
    if (!(Number.isFinite(durationMs) && durationMs >= 0))
      fail(`stall must be finite, >= 0: ${durationMs}`);
    const now = this.host.now;
    if (now >= this.stalledUntil) this.stallStartedAt = now;
    this.stalledUntil = Math.max(this.stalledUntil, now + durationMs);
    this.maxStallMs = Math.max(this.maxStallMs, this.stalledUntil - this.stallStartedAt);
  }

  /** True while the node is stalled. */
  get isStalled(): boolean {
    return this.host.now < this.stalledUntil;
  }

  takeMaxDelayMs(): number {
    if (this.isStalled) return 0;
    const v = this.maxStallMs;
    this.maxStallMs = 0;
    return v;
  }

  /** Cancels every pending timer and deferred callback of this node. */
  cancelAll(): void {
    for (const task of [...this.timers, ...this.deferred]) task.dispose();
  }

  private enqueue(owner: Set<SimTask>, atMs: number, fn: () => void): SimTask {
    const task = new SimTask(owner, fn);
    owner.add(task);
    task.event = this.host.scheduleAt(atMs, () => this.runGated(task));
    return task;
  }

  /** Runs `task` unless the node is paused (SIGSTOP) or stalled: then when that ends. */
  private runGated(task: SimTask): void {
    const until = Math.max(this.stalledUntil, this.pausedUntil);
    if (this.host.now < until) {
      task.event = this.host.scheduleAt(until, () => this.runGated(task));
      return;
    }
    task.run();
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
