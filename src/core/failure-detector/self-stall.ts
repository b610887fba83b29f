/**
 * Self-aware failure detection: how long was this observer itself stalled, and what
 * follows for the verdicts it gives about others (docs/cluster.md, "Failure detection").
 * Sans-IO: the driver feeds, at each reaper tick, the stall it measured (the lateness of
 * that tick's timer and the longest event-loop delay the runtime reported since the last
 * tick, whichever is larger) and the current time.
 *
 * Rules:
 * - a stall shorter than `ignoreBelowMs` is noise (timer jitter) and changes nothing;
 * - a longer stall is EXCUSED: the driver shifts every failure detector's last heartbeat
 *   forward by it, so time during which the observer could not read its sockets does not
 *   count against the members it monitors;
 * - a stall longer than `acceptableHeartbeatPauseMs` makes the observer's own verdicts
 *   SUSPECT for `suspectForMs` after the stall ended (one heartbeat round trip and the
 *   expected-response wait): it marks nobody unreachable on the evidence of that window
 *   (it may still mark members reachable again), and the driver logs it once per stall;
 * - a stall that starts while still suspect extends the suspect window.
 */
import { assert, fail } from "../../base/assert.js";

/** Settings of the tracker (durations in milliseconds). */
export interface SelfStallSettings {
  /** Stalls shorter than this are ignored. >= 0. */
  readonly ignoreBelowMs: number;
  /** Above this stall the observer's verdicts are suspect (the failure detector's
   * acceptableHeartbeatPauseMs). >= 0. */
  readonly acceptableHeartbeatPauseMs: number;
  /** How long verdicts stay suspect after a long stall ended. >= 0. */
  readonly suspectForMs: number;
}

/** What one observation means for the driver. */
export type SelfStallVerdict =
  /** No stall worth acting on. */
  | { readonly type: "none" }
  /** Shift the detectors by `excuseMs`; `suspect` is true when the stall was longer than
   * the acceptable pause (verdicts suspect until `suspectUntilMs`; log it). */
  | {
      readonly type: "stalled";
      readonly excuseMs: number;
      readonly suspect: boolean;
      readonly suspectUntilMs: number;
    };

/** The observer's own stall history (see the module comment). */
export class SelfStallTracker {
  private suspectUntil = Number.NEGATIVE_INFINITY;
  private stalls = 0;
  private longestMs = 0;

  constructor(private readonly settings: SelfStallSettings) {
    assert(settings.ignoreBelowMs >= 0, "ignoreBelowMs must be >= 0");
    assert(settings.acceptableHeartbeatPauseMs >= 0, "acceptableHeartbeatPauseMs must be >= 0");
    assert(settings.suspectForMs >= 0, "suspectForMs must be >= 0");
  }

  /** Stalls excused so far. */
  get stallCount(): number {
    return this.stalls;
  }

  /** The longest stall observed so far, ms. */
  get longestStallMs(): number {
    return this.longestMs;
  }

  /** Feeds the stall measured at `nowMs` (0 when the loop ran on time). */
  observe(stallMs: number, nowMs: number): SelfStallVerdict {
    if (!Number.isFinite(stallMs)) fail(`stall must be finite, got ${stallMs}`);
    if (stallMs < this.settings.ignoreBelowMs || stallMs <= 0) return { type: "none" };
    this.stalls += 1;
    this.longestMs = Math.max(this.longestMs, stallMs);
    const suspect = stallMs > this.settings.acceptableHeartbeatPauseMs;
    if (suspect)
      this.suspectUntil = Math.max(this.suspectUntil, nowMs + this.settings.suspectForMs);
    return {
      type: "stalled",
      excuseMs: stallMs,
      suspect,
      suspectUntilMs: suspect ? this.suspectUntil : nowMs,
    };
  }

  /** True while this observer's unreachability verdicts are suspect. */
  isSuspect(nowMs: number): boolean {
    return nowMs < this.suspectUntil;
  }
}
