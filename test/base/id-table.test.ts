/**
 * IdTable (src/base/id-table.ts) against a Map as the model: every sequence of sets,
 * deletes and gets answers as the Map does, through growth, shrinking and probe runs
 * that wrap around the end of the table.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { IdTable } from "../../src/base/id-table.js";

type Op =
  | { readonly op: "add"; readonly n: number }
  | { readonly op: "set"; readonly pick: number }
  | { readonly op: "delete"; readonly pick: number; readonly miss: boolean }
  | { readonly op: "get"; readonly id: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant("add" as const), n: fc.integer({ min: 1, max: 40 }) }),
  fc.record({ op: fc.constant("set" as const), pick: fc.nat() }),
  fc.record({ op: fc.constant("delete" as const), pick: fc.nat(), miss: fc.boolean() }),
  fc.record({ op: fc.constant("get" as const), id: fc.integer({ min: 1, max: 5_000 }) }),
);

/** Runs `ops` on both; ids start at `first` and grow by `stride` (strides collide). */
function run(ops: readonly Op[], first: number, stride: number): void {
  const table = new IdTable<string>();
  const model = new Map<number, string>();
  let next = first;
  for (const o of ops) {
    const live = [...model.keys()];
    switch (o.op) {
      case "add":
        for (let i = 0; i < o.n; i++) {
          table.set(next, `v${next}`);
          model.set(next, `v${next}`);
          next += stride;
        }
        break;
      case "set": {
        const id = live[o.pick % Math.max(live.length, 1)];
        if (id === undefined) break;
        table.set(id, `w${id}`);
        model.set(id, `w${id}`);
        break;
      }
      case "delete": {
        const id = o.miss ? next + stride : live[o.pick % Math.max(live.length, 1)];
        if (id === undefined) break;
        expect(table.delete(id)).toBe(model.delete(id));
        break;
      }
      case "get":
        expect(table.get(first + (o.id - 1) * stride)).toBe(model.get(first + (o.id - 1) * stride));
        break;
    }
    expect(table.size).toBe(model.size);
  }
  for (const [id, v] of model) expect(table.get(id)).toBe(v);
}

describe("IdTable", () => {
  it("answers as a Map for sequential ids (fast-check)", () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 200 }), (ops) => run(ops, 1, 1)),
      { numRuns: 300 },
    );
  });

  it("answers as a Map when ids collide modulo the capacity (strides of 64 and 1 024, large ids) (fast-check)", () => {
    fc.assert(
      fc.property(
        fc.array(opArb, { maxLength: 150 }),
        fc.constantFrom(64, 1_024, 63),
        fc.constantFrom(1, 2 ** 31 - 5, 2 ** 40 + 7, Number.MAX_SAFE_INTEGER - 2 ** 25),
        (ops, stride, first) => run(ops, first, stride),
      ),
      { numRuns: 300 },
    );
  });

  it("grows past a burst and shrinks after it", () => {
    const table = new IdTable<number>();
    for (let id = 1; id <= 10_000; id++) table.set(id, id);
    expect(table.size).toBe(10_000);
    for (let id = 1; id <= 9_990; id++) expect(table.delete(id)).toBe(true);
    expect(table.size).toBe(10);
    for (let id = 9_991; id <= 10_000; id++) expect(table.get(id)).toBe(id);
    expect(table.get(5)).toBeUndefined();
    expect(table.delete(5)).toBe(false);
  });

  it("refuses an id that is not a safe integer > 0", () => {
    const table = new IdTable<number>();
    for (const bad of [0, -1, 1.5, Number.NaN, 2 ** 53])
      expect(() => table.set(bad, 1)).toThrow(/safe integer/);
  });
});
