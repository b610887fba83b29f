import { describe, expect, it } from "vitest";
import { AssertionError } from "../../../src/base/assert.js";
import { applyRememberBatch, assertValidBatch } from "../../../src/core/shard/remember-entities.js";
import { RememberWriter } from "../../../src/core/shard/remember-writer.js";

describe("RememberWriter", () => {
  it("writes one batch at a time, in change order, at most maxUpdatesPerWrite ids", () => {
    const w = new RememberWriter(2);
    expect(w.idle).toBe(true);
    w.enqueue("a", "started");
    w.enqueue("b", "stopped");
    w.enqueue("c", "started");
    const first = w.next();
    expect(first).toEqual({ batchId: 1, batch: { started: ["a"], stopped: ["b"] } });
    expect(w.next()).toBeUndefined(); // one in flight
    expect(w.outstanding("a")).toBe(true);
    expect(w.ack(99)).toBeUndefined();
    expect(w.ack(1)).toEqual({ started: ["a"], stopped: ["b"] });
    expect(w.next()).toEqual({ batchId: 2, batch: { started: ["c"], stopped: [] } });
    expect(w.ack(2)).toBeDefined();
    expect(w.idle).toBe(true);
  });

  it("a failed batch goes back to the front of the queue, or is dropped", () => {
    const w = new RememberWriter(10);
    w.enqueue("a", "started");
    w.next();
    w.enqueue("b", "started");
    expect(w.fail(1, true)).toEqual({ started: ["a"], stopped: [] });
    expect(w.next()?.batch).toEqual({ started: ["a", "b"], stopped: [] });
    w.enqueue("c", "stopped");
    expect(w.fail(2, false)).toBeDefined();
    expect(w.next()).toEqual({ batchId: 3, batch: { started: [], stopped: ["c"] } });
    w.abandon();
    expect(w.idle).toBe(true);
    expect(w.ack(3)).toBeUndefined();
  });

  it("refuses a second outstanding change of one entity", () => {
    const w = new RememberWriter(1);
    w.enqueue("a", "started");
    expect(() => w.enqueue("a", "stopped")).toThrow(AssertionError);
    w.next();
    expect(() => w.enqueue("a", "stopped")).toThrow(AssertionError);
  });
});

describe("remember batches", () => {
  it("apply adds started and removes stopped, idempotently", () => {
    const once = applyRememberBatch(new Set(["x", "y"]), { started: ["a"], stopped: ["y"] });
    expect([...once].sort()).toEqual(["a", "x"]);
    const twice = applyRememberBatch(once, { started: ["a"], stopped: ["y"] });
    expect([...twice].sort()).toEqual(["a", "x"]);
  });

  it("a batch names each entity at most once", () => {
    expect(() => assertValidBatch({ started: ["a"], stopped: ["b"] })).not.toThrow();
    expect(() => assertValidBatch({ started: ["a"], stopped: ["a"] })).toThrow(AssertionError);
    expect(() => assertValidBatch({ started: ["a", "a"], stopped: [] })).toThrow(AssertionError);
  });
});
