/**
 * Growable big-endian writer for payloads built on the cold path (handshakes, proof
 * inputs). Hot-path encoders (user envelopes) size their output exactly instead.
 * Callers validate field ranges before writing; the writer asserts them.
 */
import { fail } from "../base/assert.js";
import { utf8ByteLength, utf8EncodeInto } from "./utf8.js";

/**
 * First buffer size. V8 keeps typed arrays of up to 64 bytes in its heap; a larger one
 * gets memory outside it, which costs microseconds to allocate and, in a process whose
 * heap is large (a simulated 1 000-member cluster opening thousands of connections per
 * second), forces extra young-generation collections. Handshakes fit in 64 bytes. For
 * the same reason the writer uses no DataView: reading an in-heap array's `buffer` moves
 * it out of the heap.
 */
const INITIAL_CAPACITY_BYTES = 64;
const U16_MAX = 0xffff;
const U64_LIMIT = 1n << 64n;
const I64_MIN = -(1n << 63n);
const I64_MAX = (1n << 63n) - 1n;

/** Appends fields to a buffer that doubles when full. */
export class ByteWriter {
  private buf = new Uint8Array(INITIAL_CAPACITY_BYTES);
  private len = 0;

  u8(v: number): this {
    if (!(Number.isInteger(v) && v >= 0 && v <= 0xff)) fail(`u8 out of range: ${v}`);
    this.room(1);
    this.buf[this.len] = v;
    this.len += 1;
    return this;
  }

  u16(v: number): this {
    if (!(Number.isInteger(v) && v >= 0 && v <= U16_MAX)) fail(`u16 out of range: ${v}`);
    this.room(2);
    this.buf[this.len] = v >>> 8;
    this.buf[this.len + 1] = v & 0xff;
    this.len += 2;
    return this;
  }

  i64(v: bigint): this {
    if (!(v >= I64_MIN && v <= I64_MAX)) fail(`i64 out of range: ${v}`);
    this.room(8);
    this.put64(BigInt.asUintN(64, v));
    this.len += 8;
    return this;
  }

  u64(v: bigint): this {
    if (!(v >= 0n && v < U64_LIMIT)) fail(`u64 out of range: ${v}`);
    this.room(8);
    this.put64(v);
    this.len += 8;
    return this;
  }

  bytes(b: Uint8Array): this {
    this.room(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
    return this;
  }

  /** A UTF-8 string prefixed by its u16 byte length. */
  str16(text: string): this {
    const n = utf8ByteLength(text);
    this.u16(n).room(n);
    if (n === text.length) {
      // ASCII: written here (a subarray would move an in-heap buffer out of the heap)
      for (let i = 0; i < n; i++) this.buf[this.len + i] = text.charCodeAt(i);
      this.len += n;
    } else this.len += utf8EncodeInto(text, this.buf.subarray(this.len, this.len + n));
    return this;
  }

  /**
   * The bytes written so far (the writer must not be used afterwards). A copy, not a
   * subarray: a subarray of an in-heap array moves it out of the heap (see
   * INITIAL_CAPACITY_BYTES), and the copy of a few dozen bytes stays in it.
   */
  finish(): Uint8Array {
    return this.len === this.buf.length ? this.buf : this.buf.slice(0, this.len);
  }

  private room(n: number): void {
    if (this.len + n <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < this.len + n) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }

  /** `v` (0 <= v < 2^64) big-endian at the end; room already made. */
  private put64(v: bigint): void {
    const hi = Number(v >> 32n);
    const lo = Number(v & 0xffffffffn);
    const b = this.buf;
    const at = this.len;
    b[at] = hi >>> 24;
    b[at + 1] = (hi >>> 16) & 0xff;
    b[at + 2] = (hi >>> 8) & 0xff;
    b[at + 3] = hi & 0xff;
    b[at + 4] = lo >>> 24;
    b[at + 5] = (lo >>> 16) & 0xff;
    b[at + 6] = (lo >>> 8) & 0xff;
    b[at + 7] = lo & 0xff;
  }
}
