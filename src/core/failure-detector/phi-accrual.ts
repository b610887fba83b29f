/**
 * Phi accrual failure detector for one monitored peer, sans-IO: it owns no clock, every
 * call takes the current monotonic time `nowMs` (from the Clock port), so the simulator
 * and tests drive it deterministically.
 *
 * Behaviour (normative: test/fixtures/reference-vectors/phi-accrual.json, docs/conformance.md):
 * - Before the first heartbeat phi is 0, the peer counts as available and
 *   `isMonitoring` is false.
 * - The first heartbeat seeds the history with E - E/4 and E + E/4
 *   (E = firstHeartbeatEstimateMs), so phi is meaningful from the start.
 * - A later heartbeat's interval is recorded ONLY IF the peer is available at that
 *   instant, judged with the state before the heartbeat: the first heartbeat after a
 *   detected failure must not teach the detector that long silences are normal.
 * - phi(now) = phi(now - last, mean + acceptableHeartbeatPauseMs,
 *   max(stdDeviation, minStdDeviationMs)); available iff phi < threshold (strict).
 * - `excuse(pauseMs, nowMs)` moves the last heartbeat forward by a pause of the OBSERVER
 *   (never past `nowMs`): silence the observer could not have seen is not the peer's
 *   (self-stall.ts). It changes nothing before the first heartbeat.
 */
import { fail } from "../../base/assert.js";
import { HeartbeatHistory } from "./heartbeat-history.js";
import { phi } from "./phi.js";
import { type PhiAccrualSettings, resolvePhiAccrualSettings } from "./phi-accrual-settings.js";

export { phi } from "./phi.js";

/** Failure detector for one monitored peer; every query takes the current time. */
export class PhiAccrualFailureDetector {
  /** Validated settings in effect. */
  readonly settings: Readonly<PhiAccrualSettings>;
  private readonly history: HeartbeatHistory;
  private lastHeartbeatAtMs: number | undefined;

  /** @throws ConfigError when an override is invalid. */
  constructor(overrides?: Partial<PhiAccrualSettings>) {
    this.settings = resolvePhiAccrualSettings(overrides);
    this.history = new HeartbeatHistory(this.settings.maxSampleSize);
  }

  /** True once the first heartbeat has been received. */
  get isMonitoring(): boolean {
    return this.lastHeartbeatAtMs !== undefined;
  }

  /** Time of the last heartbeat, or undefined before the first. */
  get lastHeartbeatMs(): number | undefined {
    return this.lastHeartbeatAtMs;
  }

  /** Intervals currently in the history window, oldest first (for diagnostics). */
  intervals(): number[] {
    return this.history.intervals();
  }

  /** Records a heartbeat received at `nowMs` (monotonic, never before the last one). */
  heartbeat(nowMs: number): void {
    if (!Number.isFinite(nowMs)) fail(`heartbeat time must be finite, got ${nowMs}`);
    const last = this.lastHeartbeatAtMs;
    if (last === undefined) {
      this.seedHistory();
    } else {
      if (!(nowMs >= last)) fail(`clock went backwards: heartbeat at ${nowMs} after ${last}`);
      if (this.isAvailable(nowMs)) this.history.add(nowMs - last);
    }
    this.lastHeartbeatAtMs = nowMs;
  }

  /**
   * The observer itself was stalled for `pauseMs` up to `nowMs`: that time does not
   * count as silence of the peer (the last heartbeat moves forward, never past `nowMs`).
   */
  excuse(pauseMs: number, nowMs: number): void {
    if (!(Number.isFinite(pauseMs) && pauseMs >= 0)) fail(`pause must be finite, >= 0: ${pauseMs}`);
    const last = this.lastHeartbeatAtMs;
    if (last === undefined || last >= nowMs) return;
    this.lastHeartbeatAtMs = Math.min(nowMs, last + pauseMs);
  }

  /** Suspicion level at `nowMs`; 0 before the first heartbeat. */
  phi(nowMs: number): number {
    const last = this.lastHeartbeatAtMs;
    if (last === undefined) return 0;
    const { acceptableHeartbeatPauseMs, minStdDeviationMs } = this.settings;
    const mean = this.history.mean + acceptableHeartbeatPauseMs;
    const stdDeviation = Math.max(this.history.stdDeviation, minStdDeviationMs);
    return phi(nowMs - last, mean, stdDeviation);
  }

  /** True iff phi at `nowMs` is strictly below the threshold. */
  isAvailable(nowMs: number): boolean {
    return this.phi(nowMs) < this.settings.threshold;
  }

  private seedHistory(): void {
    const e = this.settings.firstHeartbeatEstimateMs;
    const quarter = Math.trunc(e / 4);
    this.history.add(e - quarter);
    this.history.add(e + quarter);
  }
}
