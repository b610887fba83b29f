import { describe, expect, it } from "vitest";
import {
  allocBytes,
  BYTE_POOL_CARVE_MAX_BYTES,
  BYTE_POOL_CHUNK_BYTES,
  BytePool,
  SAME_BYTES_NATIVE_MIN_BYTES,
  sameBytes,
  utf8WriterOf,
} from "../../src/base/bytes.js";

describe("base/bytes", () => {
  it("allocBytes: a plain Uint8Array of the size asked, on an ArrayBuffer of its own", () => {
    for (const size of [0, 1, 100, 4096, 65_536, 1_048_576]) {
      const b = allocBytes(size);
      expect(Object.getPrototypeOf(b)).toBe(Uint8Array.prototype);
      expect(b.length).toBe(size);
      // not a slice of a shared pool: a message slab lives as long as any message in it
      expect(b.buffer.byteLength).toBe(size);
      b.fill(7);
      expect(b.every((x) => x === 7)).toBe(true);
    }
  });

  it("BytePool: regions one after another in shared chunks, never handed out twice", () => {
    const pool = new BytePool();
    const sizes = [1, 100, 4096, 7, 65_536, 3, 200_000, 12, 300_000, 5, 1];
    const regions = sizes.map((n, i) => {
      const r = pool.alloc(n);
      expect(Object.getPrototypeOf(r)).toBe(Uint8Array.prototype);
      expect(r.length).toBe(n);
      r.fill(i + 1);
      return r;
    });
    // every region still holds what was written into it: none overlaps another
    regions.forEach((r, i) => {
      expect(r.every((x) => x === i + 1)).toBe(true);
    });
    // aligned starts; carved ones share chunks, the one above the carve limit has its own
    for (const r of regions) expect(r.byteOffset % 8).toBe(0);
    const big = regions[8] as Uint8Array;
    expect(big.length).toBeGreaterThan(BYTE_POOL_CARVE_MAX_BYTES);
    expect(big.buffer.byteLength).toBe(big.length);
    expect((regions[1] as Uint8Array).buffer).toBe((regions[0] as Uint8Array).buffer);
    expect((regions[0] as Uint8Array).buffer.byteLength).toBe(BYTE_POOL_CHUNK_BYTES);
    expect(pool.chunks).toBe(1);
  });

  it("BytePool.shrinkLast gives the unused rest of the latest region back, and only of it", () => {
    const pool = new BytePool();
    const a = pool.alloc(1000);
    pool.shrinkLast(a, 10);
    const b = pool.alloc(50);
    expect(b.buffer).toBe(a.buffer);
    expect(b.byteOffset).toBe(a.byteOffset + 16);
    // not the latest region any more: nothing is given back
    pool.shrinkLast(a, 10);
    const c = pool.alloc(8);
    expect(c.byteOffset).toBe(b.byteOffset + 56);
    // a chunk's rest too small for a region: the next chunk
    let end = c.byteOffset + 8;
    while (BYTE_POOL_CHUNK_BYTES - end > 200_000) end = pool.alloc(200_000).byteOffset + 200_000;
    const d = pool.alloc(BYTE_POOL_CHUNK_BYTES - end + 1);
    expect(d.buffer).not.toBe(c.buffer);
    expect(d.byteOffset).toBe(0);
    expect(pool.chunks).toBe(2);
  });

  it("BytePool.copy: a copy in a pooled region, which later writes to the source do not touch", () => {
    const pool = new BytePool();
    const source = Uint8Array.from({ length: 300 }, (_, i) => i & 0xff);
    const a = pool.copy(source);
    const b = pool.copy(source.subarray(10, 20));
    source.fill(0);
    expect([...a]).toEqual(Array.from({ length: 300 }, (_, i) => i & 0xff));
    expect([...b]).toEqual(Array.from({ length: 10 }, (_, i) => i + 10));
    expect(b.buffer).toBe(a.buffer);
    expect(pool.copy(new Uint8Array(0)).length).toBe(0);
  });

  it("sameBytes: equal contents, short (a loop) and long (native), views included", () => {
    for (const n of [0, 1, SAME_BYTES_NATIVE_MIN_BYTES - 1, SAME_BYTES_NATIVE_MIN_BYTES, 5_000]) {
      const a = Uint8Array.from({ length: n }, (_, i) => (i * 7) & 0xff);
      const inBig = new Uint8Array(n + 10);
      inBig.set(a, 5);
      const b = inBig.subarray(5, 5 + n);
      expect(sameBytes(a, b)).toBe(true);
      if (n === 0) continue;
      for (const at of [0, n >> 1, n - 1]) {
        const c = a.slice();
        c[at] = ((c[at] as number) + 1) & 0xff;
        expect(sameBytes(a, c)).toBe(false);
      }
      expect(sameBytes(a, a.subarray(0, n - 1))).toBe(false);
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
