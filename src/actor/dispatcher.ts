/**
 * The dispatcher: one FIFO ready queue of actors with pending work. Each visit processes
 * at most `dispatcherThroughput` messages of one actor (fairness between actors); each
 * run processes at most `dispatcherTurnMessagesMax` messages and then yields to the event
 * loop through Scheduler.defer (setImmediate in runtime/node), so IO is never starved.
 * The first run after idleness starts on a microtask: low latency for request/response.
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
  private readonly runBound = () => this.runTurn();
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
      this.resolved.then(this.runBound);
    }
  }

  get queued(): number {
    return this.ready.length;
  }

  private runTurn(): void {
    this.kicked = false;
    this.running = true;
    let budget = this.turnMessagesMax;
    try {
      while (budget > 0) {
        const r = this.ready.shift();
        if (r === undefined) break;
        budget -= r.run(this.throughput);
      }
    } finally {
      this.running = false;
    }
    if (this.ready.length > 0 && !this.kicked) {
      this.kicked = true;
      this.scheduler.defer(this.runBound);
    }
  }
}
