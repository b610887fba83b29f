/**
 * Keyed actor timers. Each timer is an entry in a per-actor map; a fire enqueues a
 * TimerFire into the actor's own mailbox (so timer messages are ordered with other
 * messages), and at delivery the fire is accepted only if its entry is still the live
 * one for that key — so a cancelled or replaced timer never delivers, even if its fire
 * was already queued.
 */
import type { Disposable } from "../base/disposable.js";
import { ConfigError } from "../base/errors.js";
import type { Clock } from "../ports/clock.js";
import type { Scheduler } from "../ports/scheduler.js";
import type { TimerScheduler } from "./behavior.js";
import { InternalMessage } from "./internal.js";

type Mode = "single" | "delay" | "rate";

interface TimerEntry<M> {
  readonly key: unknown;
  readonly message: M;
  readonly mode: Mode;
  readonly intervalMs: number;
  dueAt: number;
  handle: Disposable | null;
}

export class TimerFire extends InternalMessage {
  constructor(readonly entry: TimerEntry<unknown>) {
    super();
  }
}

export interface TimerHost {
  readonly scheduler: Scheduler;
  readonly clock: Clock;
  enqueueInternal(message: InternalMessage): void;
}

export class ActorTimers<M> implements TimerScheduler<M> {
  private readonly entries = new Map<unknown, TimerEntry<M>>();

  constructor(private readonly host: TimerHost) {}

  startSingleTimer(key: unknown, message: M, delayMs: number): void {
    this.start(key, message, "single", delayMs, delayMs);
  }

  startTimerWithFixedDelay(
    key: unknown,
    message: M,
    delayMs: number,
    initialDelayMs = delayMs,
  ): void {
    this.start(key, message, "delay", checkInterval("delayMs", delayMs), initialDelayMs);
  }

  startTimerAtFixedRate(
    key: unknown,
    message: M,
    intervalMs: number,
    initialDelayMs = intervalMs,
  ): void {
    this.start(key, message, "rate", checkInterval("intervalMs", intervalMs), initialDelayMs);
  }

  cancel(key: unknown): void {
    const e = this.entries.get(key);
    if (e === undefined) return;
    e.handle?.dispose();
    this.entries.delete(key);
  }

  cancelAll(): void {
    for (const e of this.entries.values()) e.handle?.dispose();
    this.entries.clear();
  }

  isTimerActive(key: unknown): boolean {
    return this.entries.has(key);
  }

  get size(): number {
    return this.entries.size;
  }

  /** At delivery: the message to process, or undefined when the fire is stale. */
  accept(fire: TimerFire): M | undefined {
    const e = this.entries.get(fire.entry.key);
    if (e !== fire.entry) return undefined;
    if (e.mode === "single") this.entries.delete(e.key);
    return e.message;
  }

  private start(key: unknown, message: M, mode: Mode, intervalMs: number, initialMs: number): void {
    if (!(initialMs >= 0) || !Number.isFinite(initialMs))
      throw new ConfigError("timer delay", initialMs, "a finite duration in ms >= 0");
    this.cancel(key);
    const e: TimerEntry<M> = {
      key,
      message,
      mode,
      intervalMs,
      dueAt: this.host.clock.now() + initialMs,
      handle: null,
    };
    this.entries.set(key, e);
    e.handle = this.host.scheduler.schedule(initialMs, () => this.fire(e));
  }

  private fire(e: TimerEntry<M>): void {
    if (this.entries.get(e.key) !== e) return;
    this.host.enqueueInternal(new TimerFire(e as TimerEntry<unknown>));
    if (e.mode === "single") {
      e.handle = null;
      return;
    }
    const now = this.host.clock.now();
    e.dueAt = e.mode === "rate" ? e.dueAt + e.intervalMs : now + e.intervalMs;
    e.handle = this.host.scheduler.schedule(Math.max(0, e.dueAt - now), () => this.fire(e));
  }
}

function checkInterval(key: string, value: number): number {
  if (!(value > 0) || !Number.isFinite(value))
    throw new ConfigError(key, value, "a finite duration in ms > 0");
  return value;
}
