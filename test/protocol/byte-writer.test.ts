/**
 * ByteWriter (src/protocol/byte-writer.ts) writes big-endian fields by hand (no DataView,
 * see its INITIAL_CAPACITY_BYTES): the bytes equal a DataView and TextEncoder reference
 * for every field, across buffer growth, and out-of-range values are refused.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ByteWriter } from "../../src/protocol/byte-writer.js";
import { concat } from "./helpers.js";

type Op =
  | { readonly f: "u8"; readonly v: number }
  | { readonly f: "u16"; readonly v: number }
  | { readonly f: "i64"; readonly v: bigint }
  | { readonly f: "u64"; readonly v: bigint }
  | { readonly f: "str16"; readonly v: string }
  | { readonly f: "bytes"; readonly v: Uint8Array };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ f: fc.constant("u8" as const), v: fc.integer({ min: 0, max: 0xff }) }),
  fc.record({ f: fc.constant("u16" as const), v: fc.integer({ min: 0, max: 0xffff }) }),
  fc.record({
    f: fc.constant("i64" as const),
    v: fc.oneof(
      fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }),
      fc.constantFrom(-(1n << 63n), -1n, 0n, 1n, (1n << 63n) - 1n, 1n << 32n, -(1n << 32n)),
    ),
  }),
  fc.record({
    f: fc.constant("u64" as const),
    v: fc.oneof(
      fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
      fc.constantFrom(0n, (1n << 64n) - 1n, 0xffffffffn, 1n << 32n),
    ),
  }),
  fc.record({
    f: fc.constant("str16" as const),
    v: fc.oneof(fc.string({ maxLength: 80 }), fc.string({ unit: "grapheme", maxLength: 40 })),
  }),
  fc.record({ f: fc.constant("bytes" as const), v: fc.uint8Array({ maxLength: 100 }) }),
);

function reference(ops: readonly Op[]): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const o of ops) {
    const b = new Uint8Array(8);
    const d = new DataView(b.buffer);
    if (o.f === "u8") parts.push(Uint8Array.of(o.v));
    else if (o.f === "u16") {
      d.setUint16(0, o.v);
      parts.push(b.slice(0, 2));
    } else if (o.f === "i64") {
      d.setBigInt64(0, o.v);
      parts.push(b);
    } else if (o.f === "u64") {
      d.setBigUint64(0, o.v);
      parts.push(b);
    } else if (o.f === "str16") {
      const s = new TextEncoder().encode(o.v);
      const h = new Uint8Array(2);
      new DataView(h.buffer).setUint16(0, s.length);
      parts.push(h, s);
    } else parts.push(o.v);
  }
  return concat(...parts);
}

describe("ByteWriter", () => {
  it("writes every field as a DataView and TextEncoder would, across buffer growth", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 30 }), (ops) => {
        const w = new ByteWriter();
        for (const o of ops) {
          if (o.f === "u8") w.u8(o.v);
          else if (o.f === "u16") w.u16(o.v);
          else if (o.f === "i64") w.i64(o.v);
          else if (o.f === "u64") w.u64(o.v);
          else if (o.f === "str16") w.str16(o.v);
          else w.bytes(o.v);
        }
        expect([...w.finish()]).toEqual([...reference(ops)]);
      }),
      { numRuns: 500 },
    );
  });

  it("refuses values out of range", () => {
    const w = new ByteWriter();
    expect(() => w.u8(256)).toThrow(/u8 out of range/);
    expect(() => w.u16(-1)).toThrow(/u16 out of range/);
    expect(() => w.i64(1n << 63n)).toThrow(/i64 out of range/);
    expect(() => w.u64(-1n)).toThrow(/u64 out of range/);
    expect(w.finish().length).toBe(0);
  });
});
