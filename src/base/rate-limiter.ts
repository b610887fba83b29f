/**
 * Log rate limiting: allows at most `burstMax` events per `intervalMs` window and
 * counts what it suppressed, so noisy paths (dead letters, bad frames, retries) log
 * a bounded amount while the counts stay exact. Time is passed in (sans-IO).
 */
export class RateLimiter {
  private windowStart = Number.NEGATIVE_INFINITY;
  private inWindow = 0;
  private suppressedCount = 0;

  constructor(
    private readonly burstMax: number,
    private readonly intervalMs: number,
  ) {}

  /**
   * Returns -1 when the event must be suppressed, otherwise the number of events
   * suppressed since the last allowed one (so the caller can mention them).
   */
  tryAcquire(nowMs: number): number {
    if (nowMs - this.windowStart >= this.intervalMs) {
      this.windowStart = nowMs;
      this.inWindow = 0;
    }
    if (this.inWindow >= this.burstMax) {
      this.suppressedCount++;
      return -1;
    }
    this.inWindow++;
    const s = this.suppressedCount;
    this.suppressedCount = 0;
    return s;
  }
}
