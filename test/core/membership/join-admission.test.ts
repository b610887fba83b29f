/** Join admission at a bounded rate (core/membership/join-admission.ts). */
import { describe, expect, it } from "vitest";
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
});
