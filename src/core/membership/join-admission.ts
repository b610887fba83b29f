/**
 * Join admission: a member admits Join requests at a bounded rate, so that a boot storm
 * (many processes started at once, docs/cluster.md "Formation and boot storms") turns
 * into a steady stream of joins instead of one burst of state changes and full-state
 * broadcasts. Sans-IO and generic in the request; the driver offers each Join and,
 * periodically, takes the ones that are due.
 *
 * Rules:
 * - a token bucket: `ratePerSecond` tokens per second, holding at most `ratePerSecond`
 *   (one second's worth: a burst that small is admitted at once); `ratePerSecond` 0
 *   means unbounded (every request is admitted at once);
 * - a request is admitted at once when a token is free and nothing waits; otherwise it
 *   waits in a FIFO of at most `queueMax` requests, one per key (a retried Join of the
 *   same node replaces its earlier request and keeps its place); when the FIFO is full
 *   the request is dropped (the joiner retries: retryUnsuccessfulJoinAfterMs);
 * - `due(nowMs)` refills the bucket and returns the waiting requests it can admit now,
 *   oldest first.
 */
import { assert } from "../../base/assert.js";

/** Settings of the admission (a rate per second and a count). */
export interface JoinAdmissionSettings {
  /** Joins admitted per second (bucket size and refill rate); 0 = unbounded. */
  readonly ratePerSecond: number;
  /** Most requests waiting. >= 1. */
  readonly queueMax: number;
}

/** What happened to an offered request. */
export type JoinAdmissionOffer = "admitted" | "queued" | "dropped";

/** The admission of one member (see the module comment). */
export class JoinAdmission<T> {
  private tokens: number;
  private refilledAtMs: number | undefined;
  private readonly waiting = new Map<string, T>();

  constructor(private readonly settings: JoinAdmissionSettings) {
    assert(
      Number.isFinite(settings.ratePerSecond) && settings.ratePerSecond >= 0,
      "ratePerSecond must be finite, >= 0",
    );
    assert(Number.isInteger(settings.queueMax) && settings.queueMax >= 1, "queueMax must be >= 1");
    this.tokens = settings.ratePerSecond;
  }

  /** Requests waiting. */
  get queued(): number {
    return this.waiting.size;
  }

  /** Offers the request of node `key` at `nowMs`. */
  offer(key: string, request: T, nowMs: number): JoinAdmissionOffer {
    if (this.settings.ratePerSecond === 0) return "admitted";
    this.refill(nowMs);
    if (this.waiting.size === 0 && this.tokens >= 1) {
      this.tokens -= 1;
      return "admitted";
    }
    if (this.waiting.has(key)) {
      this.waiting.set(key, request);
      return "queued";
    }
    if (this.waiting.size >= this.settings.queueMax) return "dropped";
    this.waiting.set(key, request);
    return "queued";
  }

  /** The waiting requests admitted at `nowMs`, oldest first. */
  due(nowMs: number): T[] {
    if (this.waiting.size === 0) return [];
    this.refill(nowMs);
    const out: T[] = [];
    for (const [k, request] of this.waiting) {
      if (this.tokens < 1) break;
      this.tokens -= 1;
      this.waiting.delete(k);
      out.push(request);
    }
    return out;
  }

  private refill(nowMs: number): void {
    const rate = this.settings.ratePerSecond;
    const last = this.refilledAtMs;
    this.refilledAtMs = nowMs;
    if (last === undefined || nowMs <= last) return;
    this.tokens = Math.min(rate, this.tokens + ((nowMs - last) * rate) / 1000);
  }
}
