/** Join admission at a bounded rate (core/membership/join-admission.ts). */
import { describe, expect, it } from "vitest";
import { AssertionError } from "../../../src/base/assert.js";
import { JoinAdmission } from "../../../src/core/membership/join-admission.js";

describe("join admission", () => {
  it("admits a burst of one second's worth at once, queues the rest and admits them at the rate", () => {
    const a = new JoinAdmission<string>({ ratePerSecond: 3, queueMax: 10 });
    const offers = ["n1", "n2", "n3", "n4", "n5", "n6"].map((n) => a.offer(n, n, 0));
    expect(offers).toEqual(["admitted", "admitted", "admitted", "queued", "queued", "queued"]);
    expect(a.due(0)).toEqual([]);
    expect(a.due(400)).toEqual(["n4"]);
    expect(a.due(1_000)).toEqual(["n5", "n6"]);
    expect(a.queued).toBe(0);
  });

  it("a retried join keeps its place; a full queue drops", () => {
    const a = new JoinAdmission<string>({ ratePerSecond: 1, queueMax: 2 });
    expect(a.offer("x", "x1", 0)).toBe("admitted");
    expect(a.offer("y", "y1", 0)).toBe("queued");
    expect(a.offer("z", "z1", 0)).toBe("queued");
    expect(a.offer("w", "w1", 0)).toBe("dropped");
    expect(a.offer("y", "y2", 0)).toBe("queued");
    expect(a.due(1_000)).toEqual(["y2"]);
    expect(a.due(2_000)).toEqual(["z1"]);
  });

  it("a waiting request goes first: a new one queues behind it even if a token is free", () => {
    const a = new JoinAdmission<string>({ ratePerSecond: 1, queueMax: 5 });
    a.offer("x", "x", 0);
    a.offer("y", "y", 0);
    expect(a.offer("z", "z", 1_000)).toBe("queued");
    expect(a.due(1_000)).toEqual(["y"]);
  });

  it("rate 0 is unbounded", () => {
    const a = new JoinAdmission<string>({ ratePerSecond: 0, queueMax: 1 });
    for (let i = 0; i < 100; i++) expect(a.offer(`n${i}`, "r", 0)).toBe("admitted");
  });

  it("refills in proportion to the time passed, capped at one second's worth", () => {
    const a = new JoinAdmission<string>({ ratePerSecond: 4, queueMax: 20 });
    for (const k of ["a", "b", "c", "d"]) expect(a.offer(k, k, 0)).toBe("admitted");
    for (const k of ["e", "f", "g", "h", "i", "j", "k"]) a.offer(k, k, 0);
    expect(a.due(100)).toEqual([]); // 0.4 token
    expect(a.due(250)).toEqual(["e"]); // 1 token at 250 ms
    expect(a.due(500)).toEqual(["f"]); // 1 more
    // a long pause refills at most 4, not 4 per second of the pause
    expect(a.due(10_500)).toEqual(["g", "h", "i", "j"]);
    expect(a.queued).toBe(1);
    expect(a.due(10_500)).toEqual([]);
    expect(a.due(10_750)).toEqual(["k"]);
    expect(a.queued).toBe(0);
  });

  it("after a quiet spell only one second's worth is admitted at once", () => {
    const a = new JoinAdmission<string>({ ratePerSecond: 2, queueMax: 20 });
    expect(a.offer("a", "a", 0)).toBe("admitted");
    const offers = ["b", "c", "d"].map((k) => a.offer(k, k, 60_000));
    expect(offers).toEqual(["admitted", "admitted", "queued"]);
  });

  it("rejects a negative or infinite rate and a queue bound below 1 or fractional", () => {
    for (const ratePerSecond of [-1, Number.POSITIVE_INFINITY, Number.NaN]) {
      const f = () => new JoinAdmission({ ratePerSecond, queueMax: 1 });
      expect(f, `${ratePerSecond}`).toThrow(AssertionError);
      expect(f, `${ratePerSecond}`).toThrow("ratePerSecond must be finite, >= 0");
    }
    for (const queueMax of [0, 1.5]) {
      const f = () => new JoinAdmission({ ratePerSecond: 1, queueMax });
      expect(f, `${queueMax}`).toThrow(AssertionError);
      expect(f, `${queueMax}`).toThrow("queueMax must be >= 1");
    }
    expect(() => new JoinAdmission({ ratePerSecond: 0, queueMax: 1 })).not.toThrow();
  });

  it("refills by the time since the last refill, not since time zero", () => {
    const a = new JoinAdmission<string>({ ratePerSecond: 1, queueMax: 5 });
    expect(a.offer("a", "a", 50_000)).toBe("admitted");
    expect(a.offer("b", "b", 50_000)).toBe("queued");
    expect(a.due(50_500)).toEqual([]); // half a token
    expect(a.due(51_000)).toEqual(["b"]);
  });
});
