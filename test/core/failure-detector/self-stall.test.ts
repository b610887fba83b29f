/** Self-aware failure detection (core/failure-detector/self-stall.ts) and the detector's excuse. */
import { describe, expect, it } from "vitest";
import { PhiAccrualFailureDetector } from "../../../src/core/failure-detector/phi-accrual.js";
import { SelfStallTracker } from "../../../src/core/failure-detector/self-stall.js";

const settings = { ignoreBelowMs: 100, acceptableHeartbeatPauseMs: 3_000, suspectForMs: 2_000 };

describe("self-stall tracker", () => {
  it("ignores jitter below the floor", () => {
    const t = new SelfStallTracker(settings);
    expect(t.observe(0, 1_000)).toEqual({ type: "none" });
    expect(t.observe(99, 2_000)).toEqual({ type: "none" });
    expect(t.stallCount).toBe(0);
  });

  it("excuses a stall; within the acceptable pause the verdicts stay trusted", () => {
    const t = new SelfStallTracker(settings);
    expect(t.observe(2_500, 10_000)).toEqual({
      type: "stalled",
      excuseMs: 2_500,
      suspect: false,
      suspectUntilMs: 10_000,
    });
    expect(t.isSuspect(10_000)).toBe(false);
  });

  it("a stall longer than the acceptable pause makes the verdicts suspect for a while; a new one extends it", () => {
    const t = new SelfStallTracker(settings);
    const v = t.observe(5_000, 10_000);
    expect(v).toMatchObject({
      type: "stalled",
      excuseMs: 5_000,
      suspect: true,
      suspectUntilMs: 12_000,
    });
    expect(t.isSuspect(11_999)).toBe(true);
    expect(t.isSuspect(12_000)).toBe(false);
    t.observe(4_000, 11_000);
    expect(t.isSuspect(12_500)).toBe(true);
    expect(t.longestStallMs).toBe(5_000);
  });
});

describe("phi accrual excuse", () => {
  it("the observer's own stall does not count as the peer's silence", () => {
    const a = new PhiAccrualFailureDetector({ acceptableHeartbeatPauseMs: 3_000 });
    const b = new PhiAccrualFailureDetector({ acceptableHeartbeatPauseMs: 3_000 });
    for (let t = 0; t <= 10_000; t += 1_000) {
      a.heartbeat(t);
      b.heartbeat(t);
    }
    // both were silent for 10 s; `a`'s observer was itself stalled for 9.5 s of it
    a.excuse(9_500, 20_000);
    expect(a.isAvailable(20_000)).toBe(true);
    expect(b.isAvailable(20_000)).toBe(false);
  });

  it("never moves the last heartbeat past now, and does nothing before the first", () => {
    const d = new PhiAccrualFailureDetector();
    d.excuse(5_000, 1_000);
    expect(d.isMonitoring).toBe(false);
    d.heartbeat(1_000);
    d.excuse(60_000, 2_000);
    expect(d.lastHeartbeatMs).toBe(2_000);
  });
});
