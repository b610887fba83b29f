import { describe, expect, it } from "vitest";
import { EventQueue } from "../../src/runtime/sim/event-queue.js";
import { Fnv1a64 } from "../../src/runtime/sim/fnv1a64.js";

function drain<T>(queue: EventQueue<T>): T[] {
  const out: T[] = [];
  for (let e = queue.pop(); e !== undefined; e = queue.pop()) out.push(e.item);
  return out;
}

describe("EventQueue", () => {
  it("pops in time order, ties in insertion order", () => {
    const q = new EventQueue<string>();
    q.push(5, "e5a");
    q.push(1, "e1a");
    q.push(5, "e5b");
    q.push(0, "e0");
    q.push(1, "e1b");
    q.push(5, "e5c");
    expect(q.size).toBe(6);
    expect(q.peekTime()).toBe(0);
    expect(drain(q)).toEqual(["e0", "e1a", "e1b", "e5a", "e5b", "e5c"]);
    expect(q.size).toBe(0);
    expect(q.pop()).toBeUndefined();
    expect(q.peekTime()).toBeUndefined();
  });

  it("assigns increasing seq across pushes", () => {
    const q = new EventQueue<number>();
    const a = q.push(3, 1);
    const b = q.push(1, 2);
    expect(b.seq).toBeGreaterThan(a.seq);
  });

  it("matches a sorted reference on a large random workload", () => {
    const q = new EventQueue<number>();
    const ref: { time: number; seq: number }[] = [];
    let x = 12345;
    for (let i = 0; i < 5000; i++) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      const time = x % 100;
      ref.push({ time, seq: q.push(time, i).seq });
    }
    ref.sort((a, b) => a.time - b.time || a.seq - b.seq);
    expect(drain(q)).toEqual(ref.map((r) => r.seq));
  });

  it("cancels by marking: cancelled events never pop and size stays accurate", () => {
    const q = new EventQueue<string>();
    const a = q.push(1, "a");
    q.push(2, "b");
    const c = q.push(3, "c");
    expect(q.cancel(a)).toBe(true);
    expect(q.cancel(a)).toBe(false);
    c.dispose();
    c.dispose();
    expect(q.size).toBe(1);
    expect(q.peekTime()).toBe(2);
    expect(drain(q)).toEqual(["b"]);
  });

  it("cancelling an event that already ran is a no-op", () => {
    const q = new EventQueue<string>();
    const a = q.push(1, "a");
    q.push(2, "b");
    expect(q.pop()?.item).toBe("a");
    expect(q.cancel(a)).toBe(false);
    expect(q.size).toBe(1);
  });

  it("compacts when most events are cancelled and keeps order", () => {
    const q = new EventQueue<number>();
    const events = Array.from({ length: 1000 }, (_, i) => q.push(1000 - i, i));
    for (const e of events) if (e.item % 10 !== 0) e.dispose();
    expect(q.size).toBe(100);
    const items = drain(q);
    expect(items).toHaveLength(100);
    expect(items).toEqual([...items].sort((a, b) => b - a));
  });

  it("rejects events of another queue", () => {
    const q1 = new EventQueue<number>();
    const q2 = new EventQueue<number>();
    const e = q1.push(1, 1);
    expect(() => q2.cancel(e)).toThrow(/another queue/);
  });
});

describe("Fnv1a64", () => {
  it.each([
    ["", "cbf29ce484222325"],
    ["a", "af63dc4c8601ec8c"],
    ["foobar", "85944171f73967e8"],
    ["héllo €𝄞", "2f19d4a22a6395b5"],
  ])("hashes %j like the reference FNV-1a 64 over UTF-8", (text, hex) => {
    expect(new Fnv1a64().update(text).digest()).toBe(hex);
  });

  it("is incremental: chunks hash like the whole", () => {
    expect(new Fnv1a64().update("foo").update("bar").digest()).toBe("85944171f73967e8");
  });
});
