/** The stability tracker's own checks (its timing rules: test/core/scripts/sbr-stability*.txt). */
import { describe, expect, it } from "vitest";
import { AssertionError } from "../../../src/base/assert.js";
import { SbrStabilityTracker } from "../../../src/core/downing/sbr-stability.js";

const tracker = (stableAfterMs: number, downAllWhenUnstableMs: number) =>
  new SbrStabilityTracker({ stableAfterMs, downAllWhenUnstableMs });

describe("sbr stability tracker", () => {
  it("rejects a stable-after of 0 or less and a negative down-all bound, naming the setting", () => {
    expect(() => tracker(0, 15_000)).toThrow(new AssertionError("stableAfterMs must be > 0"));
    expect(() => tracker(-1, 15_000)).toThrow(AssertionError);
    expect(() => tracker(20_000, -1)).toThrow(
      new AssertionError("downAllWhenUnstableMs must be >= 0"),
    );
    expect(() => tracker(1, 0)).not.toThrow();
  });

  it("rejects a negative or non-finite pause, naming it", () => {
    const t = tracker(20_000, 15_000);
    expect(() => t.excuse(-1, 0)).toThrow(new AssertionError("pause must be finite, >= 0: -1"));
    expect(() => t.excuse(Number.POSITIVE_INFINITY, 0)).toThrow(
      new AssertionError("pause must be finite, >= 0: Infinity"),
    );
    expect(() => t.excuse(Number.NaN, 0)).toThrow(AssertionError);
    expect(() => t.excuse(0, 0)).not.toThrow();
  });
});
