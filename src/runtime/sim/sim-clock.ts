/**
 * A simulated node's clock: local time = offset + worldTime * (1 + driftPpm / 1e6).
 *
 * Drift models a crystal running fast or slow, offset models nodes that booted at
 * different times; both let tests expose code that wrongly compares clock readings
 * across nodes. Invariant: a timer scheduled for local delay d fires at the first world
 * time at which this clock reads at least (reading at scheduling + d) — rounding is
 * corrected upwards, so code that re-checks `now() >= deadline` in a timer never sees
 * it fire early.
 */
import { fail } from "../../base/assert.js";
import type { Clock } from "../../ports/clock.js";

/** Source of world (virtual) time. */
export interface WorldTime {
  readonly now: number;
}

/** Options of a node's simulated clock. */
export interface SimClockOptions {
  /** Rate error in parts per million; +1000 runs 0.1% fast. Must be > -1e6. Default 0. */
  readonly clockDriftPpm?: number;
  /** Local reading at world time 0, ms. Default 0. */
  readonly clockOffsetMs?: number;
}

/** Per-node clock derived from world time with offset and drift. */
export class SimClock implements Clock {
  /** Local ms per world ms. */
  readonly rate: number;
  readonly offsetMs: number;

  constructor(
    private readonly world: WorldTime,
    options: SimClockOptions = {},
  ) {
    const driftPpm = options.clockDriftPpm ?? 0;
    const offsetMs = options.clockOffsetMs ?? 0;
    if (!(Number.isFinite(driftPpm) && driftPpm > -1e6))
      fail(`clockDriftPpm out of range: ${driftPpm}`);
    if (!Number.isFinite(offsetMs)) fail(`clockOffsetMs must be finite: ${offsetMs}`);
    this.rate = 1 + driftPpm / 1e6;
    this.offsetMs = offsetMs;
  }

  now(): number {
    return this.localAt(this.world.now);
  }

  /** This clock's reading at a given world time. */
  localAt(worldTimeMs: number): number {
    return this.offsetMs + worldTimeMs * this.rate;
  }

  /** The world time at which this clock will read `now() + localDelayMs` (or just after). */
  worldTimeAfter(localDelayMs: number): number {
    const worldNow = this.world.now;
    const target = this.localAt(worldNow) + localDelayMs;
    let t = worldNow + localDelayMs / this.rate;
    let nudge = Math.max(Math.abs(t), 1) * Number.EPSILON;
    while (this.localAt(t) < target) {
      t += nudge;
      nudge *= 2;
    }
    return Math.max(t, worldNow);
  }
}
