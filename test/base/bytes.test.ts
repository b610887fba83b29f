import { describe, expect, it } from "vitest";
import { allocBytes, utf8WriterOf } from "../../src/base/bytes.js";

describe("base/bytes", () => {
  it("allocBytes: a plain Uint8Array of the size asked, on an ArrayBuffer of its own", () => {
    for (const size of [0, 1, 100, 4096, 65_536, 1_048_576]) {
      const b = allocBytes(size);
      expect(Object.getPrototypeOf(b)).toBe(Uint8Array.prototype);
      expect(b.length).toBe(size);
      // not a slice of a shared pool: the memory accounting of frame buffers relies on it
      expect(b.buffer.byteLength).toBe(size);
      b.fill(7);
      expect(b.every((x) => x === 7)).toBe(true);
    }
  });

  it("utf8WriterOf: writes into the same memory, byte for byte as TextEncoder", () => {
    const b = allocBytes(1024);
    const w = utf8WriterOf(b);
    // Node: always a writer (the tests run on Node)
    expect(w).toBeDefined();
    const encoder = new TextEncoder();
    for (const s of [
      "x".repeat(80),
      "é€😀",
      "a\uD800b",
      "\uDC00".repeat(10),
      `${"y".repeat(70)}\uD83D`,
    ]) {
      b.fill(0);
      const n = w?.utf8Write(s, 5, 3 * s.length) ?? -1;
      const expected = encoder.encode(s);
      expect(n).toBe(expected.length);
      expect(b.subarray(5, 5 + n)).toEqual(expected);
      expect(b[4]).toBe(0);
      expect(b[5 + n]).toBe(0);
    }
  });
});
