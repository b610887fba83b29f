/**
 * Escalating warnings as the region's buffers fill: one log line when the total first
 * reaches 10 %, 50 % and 90 % of bufferSizeMax (warn, warn, error). The levels re-arm only
 * after the buffers have been empty AND warnIntervalMs has passed since the last of these
 * warnings, so a buffer that keeps filling and draining logs at a bounded rate while a
 * buffer that keeps growing always reports the next level at once. Time is an input.
 */
import type { RegionLogLevel } from "./region-types.js";

/** Fractions of bufferSizeMax that are reported, lowest first, with their log level. */
export const BUFFER_WARN_LEVELS: readonly {
  readonly fraction: number;
  readonly level: RegionLogLevel;
}[] = Object.freeze([
  { fraction: 0.1, level: "warn" },
  { fraction: 0.5, level: "warn" },
  { fraction: 0.9, level: "error" },
]);

/** A warning to log. */
export interface BufferWarning {
  readonly level: RegionLogLevel;
  /** Percent of bufferSizeMax reached (10, 50 or 90). */
  readonly percent: number;
}

/** Tracks which buffer level was last reported. */
export class BufferLevelWarning {
  /** Index into BUFFER_WARN_LEVELS of the last level reported (-1: none). */
  private reported = -1;
  private lastWarnMs = Number.NEGATIVE_INFINITY;
  private emptiedSinceWarn = true;
  private readonly thresholds: readonly number[];

  constructor(
    bufferSizeMax: number,
    private readonly warnIntervalMs: number,
  ) {
    this.thresholds = BUFFER_WARN_LEVELS.map((l) =>
      Math.max(1, Math.ceil(l.fraction * bufferSizeMax)),
    );
  }

  /** The buffers hold `total` messages after growing; a warning when a level is reached. */
  onGrown(total: number, nowMs: number): BufferWarning | undefined {
    if (this.emptiedSinceWarn && nowMs - this.lastWarnMs >= this.warnIntervalMs) this.reported = -1;
    let index = -1;
    for (let i = 0; i < this.thresholds.length; i++)
      if (total >= (this.thresholds[i] as number)) index = i;
    if (index <= this.reported) return undefined;
    this.reported = index;
    this.lastWarnMs = nowMs;
    this.emptiedSinceWarn = false;
    const l = BUFFER_WARN_LEVELS[index] as (typeof BUFFER_WARN_LEVELS)[number];
    return { level: l.level, percent: Math.round(l.fraction * 100) };
  }

  /** The buffers are empty. */
  onEmpty(): void {
    this.emptiedSinceWarn = true;
  }
}
