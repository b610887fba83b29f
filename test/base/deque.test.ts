import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Deque } from "../../src/base/deque.js";

type Op =
  | { readonly op: "push"; readonly v: number }
  | { readonly op: "unshift"; readonly v: number }
  | { readonly op: "shift" }
  | { readonly op: "clear" };

const ops = fc.array(
  fc.oneof(
    { weight: 4, arbitrary: fc.record({ op: fc.constant("push" as const), v: fc.integer() }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant("unshift" as const), v: fc.integer() }) },
    { weight: 3, arbitrary: fc.record({ op: fc.constant("shift" as const) }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant("clear" as const) }) },
  ) as fc.Arbitrary<Op>,
  { maxLength: 300 },
);

describe("Deque", () => {
  it("behaves as an array used as a queue, from its first push on, whatever the first capacity", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 40 }), ops, (capacity, script) => {
        const d = new Deque<number>(capacity);
        const model: number[] = [];
        for (const s of script) {
          if (s.op === "push") {
            d.push(s.v);
            model.push(s.v);
          } else if (s.op === "unshift") {
            d.unshift(s.v);
            model.unshift(s.v);
          } else if (s.op === "shift") expect(d.shift()).toBe(model.shift());
          else {
            d.clear();
            model.length = 0;
          }
          expect(d.length).toBe(model.length);
          expect(d.peek()).toBe(model[0]);
        }
        expect([...d]).toEqual(model);
      }),
      { numRuns: 300 },
    );
  });

  it("a deque that was never pushed to is empty and can be cleared, shifted and iterated", () => {
    const d = new Deque<string>();
    expect(d.length).toBe(0);
    expect(d.shift()).toBeUndefined();
    expect(d.peek()).toBeUndefined();
    d.clear();
    expect([...d]).toEqual([]);
    d.unshift("a");
    d.push("b");
    expect([...d]).toEqual(["a", "b"]);
    // another deque still starts empty: the shared empty ring was never written
    expect([...new Deque<string>()]).toEqual([]);
  });
});
