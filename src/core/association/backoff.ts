/**
 * Capped exponential backoff with jitter for reconnect attempts: attempt n waits
 * min(max, min·2^n) · (1 + randomFactor·r) for r uniform in [0, 1), capped at max. The
 * random draw is an input so the simulator replays it.
 */
export interface BackoffSettings {
  readonly minMs: number;
  readonly maxMs: number;
  readonly randomFactor: number;
}

export function backoffMs(s: BackoffSettings, attempt: number, random01: number): number {
  const base = Math.min(s.maxMs, s.minMs * 2 ** Math.min(attempt, 30));
  return Math.min(s.maxMs, base * (1 + s.randomFactor * random01));
}
