import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { utf8ByteLength, utf8Decode, utf8Encode, utf8Write } from "../../src/protocol/utf8.js";

/** Any UTF-16 code unit sequence, lone surrogates included. */
const anyCodeUnits = fc
  .array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 30 })
  .map((units) => String.fromCharCode(...units));

describe("utf8 helpers", () => {
  it("utf8ByteLength and utf8Write agree with TextEncoder on any string", () => {
    fc.assert(
      fc.property(fc.oneof(anyCodeUnits, fc.string({ unit: "grapheme" })), (text) => {
        const expected = utf8Encode(text);
        const length = utf8ByteLength(text);
        expect(length).toBe(expected.length);
        const out = new Uint8Array(length + 2);
        utf8Write(text, out, 1, length);
        expect(out.subarray(1, 1 + length)).toEqual(expected);
        expect(out[0]).toBe(0);
        expect(out[length + 1]).toBe(0);
      }),
      { numRuns: 2000 },
    );
  });

  it("keeps a leading BOM and rejects invalid UTF-8", () => {
    expect(utf8Decode(utf8Encode("\uFEFFx"))).toBe("\uFEFFx");
    expect(utf8Decode(Uint8Array.of(0xc3))).toBeUndefined();
  });
});
