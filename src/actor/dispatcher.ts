/**
 * The dispatcher: one FIFO ready queue of actors with pending work. Each visit processes
 * at most `dispatcherThroughput` messages of one actor (fairness between actors); each
 * run processes at most `dispatcherTurnMessagesMax` messages and then yields to the event
 * loop through Scheduler.defer (setImmediate in runtime/node), so IO is never starved.
 * The first run after idleness starts on a microtask: low latency for request/response.
 * The budget spans consecutive microtask-started runs too: a closed loop of promise
 * continuations (ask -> reply -> ask ...) would otherwise never leave the microtask
 * queue. Once `dispatcherTurnMessagesMax` messages ran since the last macrotask yield,
 * the next run is deferred to a macrotask, where the count starts again.
 */
import { Deque } from "../base/deque.js";
import type { Scheduler } from "../ports/scheduler.js";

/** Something the dispatcher can run: an actor cell. */
export interface Runnable {
  /** Processes up to `budget` messages; returns how many it processed (>= 1). */
  run(budget: number): number;
}

export class Dispatcher {
  private readonly ready = new Deque<Runnable>(1024);
  private kicked = false;
  private running = false;
  /** Messages processed since the last run that started on a macrotask. */
  private sinceYield = 0;
  private readonly runBound = () => this.runTurn();
  private readonly runDeferredBound = () => {
    this.sinceYield = 0;
    this.runTurn();
  };
  private readonly resolved = Promise.resolve();

  constructor(
    private readonly scheduler: Scheduler,
    private readonly throughput: number,
    private readonly turnMessagesMax: number,
  ) {}

  /** Queues a runnable that is not already queued. */
  schedule(r: Runnable): void {
    this.ready.push(r);
    if (!this.kicked && !this.running) {
      this.kicked = true;
      if (this.sinceYield < this.turnMessagesMax) this.resolved.then(this.runBound);
      else this.scheduler.defer(this.runDeferredBound);
    }
  }

  get queued(): number {
    return this.ready.length;
  }

  private runTurn(): void {
    this.kicked = false;
    this.running = true;
    try {
      while (this.sinceYield < this.turnMessagesMax) {
        const r = this.ready.shift();
        if (r === undefined) break;
        this.sinceYield += r.run(this.throughput);
      }
    } finally {
      this.running = false;
    }
    if (this.ready.length > 0 && !this.kicked) {
      this.kicked = true;
      this.scheduler.defer(this.runDeferredBound);
    }
  }
}
