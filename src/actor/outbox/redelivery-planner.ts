/**
 * RedeliveryPlanner: the outbox's decisions about time, with no actor, timer or clock
 * inside. Every method that depends on time takes the current time (ms, monotonic) as
 * an argument, so the logic is a plain deterministic state machine that tests drive
 * directly.
 *
 * It tracks the unconfirmed deliveries of one outbox incarnation: how many attempts
 * each has had and when the next one is due. The attempt counts are not persisted; a
 * recovered outbox starts them again at 0 and redelivers everything at once (bounded
 * by the burst).
 *
 * Rules:
 * - After attempt n (n >= 1) the next attempt is due `redeliveryDelayMs(n)` later:
 *   `redeliverIntervalMs * redeliverBackoffFactor^(n-1)`, at most `redeliverBackoffMaxMs`.
 * - A tick redelivers the due deliveries, earliest due first (ties: lowest deliveryId),
 *   at most `redeliveryBurstMax`. When it hits that bound the next wake-up is no sooner
 *   than `redeliverIntervalMs` after the tick.
 * - A delivery that is due with `warnAfterAttempts` or more attempts made is reported
 *   once (and redelivered as usual).
 * - A confirmed delivery is forgotten and never planned again.
 */
import type { OutboxSettings } from "./outbox-settings.js";

/** The planner's part of the outbox settings. */
export type PlannerSettings = Pick<
  OutboxSettings,
  | "redeliverIntervalMs"
  | "redeliverBackoffFactor"
  | "redeliverBackoffMaxMs"
  | "redeliveryBurstMax"
  | "warnAfterAttempts"
>;

/** One attempt to make now: `attempt` counts from 1 within this incarnation. */
export interface PlannedAttempt {
  readonly deliveryId: number;
  readonly attempt: number;
}

/** What a tick decided. */
export interface TickPlan {
  /** Deliveries to (re)send now, in this order. */
  readonly deliver: readonly PlannedAttempt[];
  /** Deliveries that just crossed `warnAfterAttempts` (attempts made before this tick). */
  readonly warn: readonly PlannedAttempt[];
}

/** Wait after attempt `attempts` (>= 1) before the next one, in ms. */
export function redeliveryDelayMs(attempts: number, s: PlannerSettings): number {
  const exp = Math.max(0, attempts - 1);
  const d = s.redeliverIntervalMs * s.redeliverBackoffFactor ** exp;
  return Number.isFinite(d) ? Math.min(d, s.redeliverBackoffMaxMs) : s.redeliverBackoffMaxMs;
}

/** Whether a new message may be sent while `unconfirmed` are outstanding. */
export function admitsSend(unconfirmed: number, unconfirmedMax: number): boolean {
  return unconfirmed < unconfirmedMax;
}

interface Entry {
  readonly deliveryId: number;
  attempts: number;
  dueAtMs: number;
  warned: boolean;
}

/** A heap slot; stale when its entry was confirmed or rescheduled since. */
interface Slot {
  readonly dueAtMs: number;
  readonly entry: Entry;
}

export class RedeliveryPlanner {
  private readonly entries = new Map<number, Entry>();
  /** Min-heap by (dueAtMs, deliveryId); may hold stale slots (lazy deletion). */
  private heap: Slot[] = [];
  /** Time of the last tick that hit redeliveryBurstMax, if the latest tick did. */
  private cutAtMs: number | undefined = undefined;

  constructor(private readonly settings: PlannerSettings) {}

  /** Deliveries tracked (sent or recovered, not confirmed). */
  get size(): number {
    return this.entries.size;
  }

  has(deliveryId: number): boolean {
    return this.entries.has(deliveryId);
  }

  /** Attempts made for the delivery in this incarnation (undefined when not tracked). */
  attempts(deliveryId: number): number | undefined {
    return this.entries.get(deliveryId)?.attempts;
  }

  /** When the delivery's next attempt is due (undefined when not tracked). */
  dueAtMs(deliveryId: number): number | undefined {
    return this.entries.get(deliveryId)?.dueAtMs;
  }

  /**
   * A new delivery whose first attempt is made now (its event is durable). Returns the
   * attempt to make.
   */
  firstAttempt(deliveryId: number, nowMs: number): PlannedAttempt {
    this.track(deliveryId, 1, nowMs + redeliveryDelayMs(1, this.settings));
    return { deliveryId, attempt: 1 };
  }

  /** An unconfirmed delivery found by recovery: no attempts yet, due at once. */
  recovered(deliveryId: number, nowMs: number): void {
    this.track(deliveryId, 0, nowMs);
  }

  /** The delivery was confirmed: never planned again. False when it was not tracked. */
  confirm(deliveryId: number): boolean {
    const had = this.entries.delete(deliveryId);
    if (had && this.heap.length > 2 * this.entries.size + 64) this.rebuildHeap();
    return had;
  }

  /** Forgets everything (a new incarnation starts from recovery). */
  clear(): void {
    this.entries.clear();
    this.heap = [];
    this.cutAtMs = undefined;
  }

  /** The deliveries due at `nowMs`, at most redeliveryBurstMax, each rescheduled. */
  tick(nowMs: number): TickPlan {
    const s = this.settings;
    const deliver: PlannedAttempt[] = [];
    const warn: PlannedAttempt[] = [];
    for (;;) {
      const top = this.peekLive();
      if (top === undefined || top.dueAtMs > nowMs || deliver.length >= s.redeliveryBurstMax) break;
      this.pop();
      const e = top.entry;
      if (!e.warned && e.attempts >= s.warnAfterAttempts) {
        e.warned = true;
        warn.push({ deliveryId: e.deliveryId, attempt: e.attempts });
      }
      e.attempts++;
      e.dueAtMs = nowMs + redeliveryDelayMs(e.attempts, s);
      this.push({ dueAtMs: e.dueAtMs, entry: e });
      deliver.push({ deliveryId: e.deliveryId, attempt: e.attempts });
    }
    const next = this.peekLive();
    this.cutAtMs =
      deliver.length >= s.redeliveryBurstMax && next !== undefined && next.dueAtMs <= nowMs
        ? nowMs
        : undefined;
    return { deliver, warn };
  }

  /**
   * When the next tick should run: the earliest due time, but no sooner than
   * redeliverIntervalMs after a tick that hit the burst bound. Undefined when nothing
   * is tracked.
   */
  nextWakeAtMs(): number | undefined {
    const top = this.peekLive();
    if (top === undefined) return undefined;
    return this.cutAtMs === undefined
      ? top.dueAtMs
      : Math.max(top.dueAtMs, this.cutAtMs + this.settings.redeliverIntervalMs);
  }

  // ---------------------------------------------------------------- internals

  private track(deliveryId: number, attempts: number, dueAtMs: number): void {
    const entry: Entry = { deliveryId, attempts, dueAtMs, warned: false };
    this.entries.set(deliveryId, entry);
    this.push({ dueAtMs, entry });
  }

  private isLive(slot: Slot): boolean {
    return (
      this.entries.get(slot.entry.deliveryId) === slot.entry && slot.entry.dueAtMs === slot.dueAtMs
    );
  }

  /** The earliest live slot, dropping stale ones on the way. */
  private peekLive(): Slot | undefined {
    for (;;) {
      const top = this.heap[0];
      if (top === undefined || this.isLive(top)) return top;
      this.pop();
    }
  }

  private rebuildHeap(): void {
    this.heap = [];
    for (const e of this.entries.values()) this.push({ dueAtMs: e.dueAtMs, entry: e });
  }

  private push(slot: Slot): void {
    const h = this.heap;
    h.push(slot);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!less(h[i] as Slot, h[p] as Slot)) break;
      [h[i], h[p]] = [h[p] as Slot, h[i] as Slot];
      i = p;
    }
  }

  private pop(): void {
    const h = this.heap;
    const last = h.pop();
    if (last === undefined || h.length === 0) return;
    h[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && less(h[l] as Slot, h[m] as Slot)) m = l;
      if (r < h.length && less(h[r] as Slot, h[m] as Slot)) m = r;
      if (m === i) return;
      [h[i], h[m]] = [h[m] as Slot, h[i] as Slot];
      i = m;
    }
  }
}

function less(a: Slot, b: Slot): boolean {
  return (
    a.dueAtMs < b.dueAtMs || (a.dueAtMs === b.dueAtMs && a.entry.deliveryId < b.entry.deliveryId)
  );
}
