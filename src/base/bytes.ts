/**
 * Byte buffers for the write paths (frame batches, message slabs) without a node import:
 * on Node the global `Buffer` is feature-detected and used for two things plain typed
 * arrays do slower. What callers get are always plain `Uint8Array`s (a Buffer's
 * `subarray` costs several times a plain one's, and a hot path takes one per message).
 *
 * - `allocBytes(n)`: a buffer whose contents are unspecified (Node: the memory of
 *   `Buffer.allocUnsafeSlow`, no zero fill and an ArrayBuffer of its own, not a slice of
 *   Node's shared pool; elsewhere a zeroed `Uint8Array`). Only for
 *   buffers whose every exposed byte is written first: a frame batch or a message is
 *   always a view of written bytes, never of the rest.
 * - `BytePool`: short-lived buffers (frame batches on their way to a socket, the
 *   simulator's copies of bytes in flight) carved one after another from shared chunks
 *   of BYTE_POOL_CHUNK_BYTES, so that a batch costs a bump of an offset instead of an
 *   ArrayBuffer of its own (each of which V8 tracks, counts as external memory and
 *   sweeps, and which at 128 KiB and more the C allocator maps and unmaps page by page).
 *   A region is handed out once and never written by the pool again; the unused tail of
 *   the latest region can be given back (`shrinkLast`). A chunk lives while any of its
 *   regions is referenced, so only what is released soon may come from a pool: a view
 *   kept for long pins the whole chunk (copy it out). Requests above
 *   BYTE_POOL_CARVE_MAX_BYTES get a buffer of their own.
 * - `sameBytes(a, b)`: equality of contents; on Node by `Buffer.compare` (a native memory
 *   comparison) from SAME_BYTES_NATIVE_MIN_BYTES on, which compares the tens of
 *   kilobytes of a cached gossip many times faster than a loop.
 * - `utf8WriterOf(b)`: on Node, a Buffer over `b`'s memory, whose `utf8Write` writes a
 *   string's UTF-8 bytes in place, without the view `TextEncoder#encodeInto` needs. It
 *   encodes exactly as `encodeInto` does (a lone surrogate becomes U+FFFD), and it is
 *   what msgpackr itself calls on Node.
 */

/** What this module uses of Node's Buffer class. */
interface BufferClass {
  allocUnsafeSlow(size: number): Uint8Array;
  from(buffer: ArrayBufferLike, byteOffset: number, length: number): Uint8Array;
  compare(a: Uint8Array, b: Uint8Array): number;
}

/** A Node Buffer, as far as `utf8Write(string, offset, length)` (returns bytes written). */
export interface Utf8Writer {
  utf8Write(s: string, offset: number, length: number): number;
}

const NodeBuffer = (globalThis as { Buffer?: BufferClass }).Buffer;

/** A plain Uint8Array of `size` bytes whose contents are unspecified (module comment). */
export function allocBytes(size: number): Uint8Array {
  if (NodeBuffer === undefined) return new Uint8Array(size);
  const b = NodeBuffer.allocUnsafeSlow(size);
  return new Uint8Array(b.buffer, b.byteOffset, size);
}

/**
 * A copy of `b` as a plain Uint8Array. Not `b.slice()`: on a Node Buffer (a socket's
 * chunk, or a view of one) `slice` is a view, which keeps the whole chunk alive and
 * changes with it.
 */
export function copyBytes(b: Uint8Array): Uint8Array {
  // not Uint8Array.prototype.slice.call(b) either: that builds a Buffer through its
  // species constructor, the slow way, and a Buffer again
  const copy = new Uint8Array(b.length);
  copy.set(b);
  return copy;
}

/** Size of one chunk of a BytePool. */
export const BYTE_POOL_CHUNK_BYTES = 1_048_576;
/** Largest region a BytePool carves from a chunk; larger requests get their own buffer. */
export const BYTE_POOL_CARVE_MAX_BYTES = 262_144;
/** Regions start at multiples of this (aligned like a fresh buffer's start, as msgpackr does). */
const POOL_ALIGN_BYTES = 8;

/** Bump allocator of short-lived byte regions over shared chunks (module comment). */
export class BytePool {
  private chunk: Uint8Array = new Uint8Array(0);
  /** Next free offset in `chunk`. */
  private pos = 0;
  /** The latest region carved (its tail may be given back), if any. */
  private last: Uint8Array | undefined = undefined;
  private lastStart = 0;
  private chunksAllocated = 0;

  /** Chunks allocated so far (tests, diagnostics). */
  get chunks(): number {
    return this.chunksAllocated;
  }

  /** A region of `size` bytes with unspecified contents. */
  alloc(size: number): Uint8Array {
    if (size > BYTE_POOL_CARVE_MAX_BYTES) {
      this.last = undefined;
      return allocBytes(size);
    }
    if (this.pos + size > this.chunk.length) {
      this.chunk = allocBytes(BYTE_POOL_CHUNK_BYTES);
      this.chunksAllocated++;
      this.pos = 0;
    }
    const start = this.pos;
    const region = this.chunk.subarray(start, start + size);
    this.pos = alignUp(start + size);
    this.last = region;
    this.lastStart = start;
    return region;
  }

  /**
   * A copy of `b` in a region of the pool: for copies kept a short while by a bounded
   * cache (oldest out first), which then pin only the last chunk or two, instead of an
   * array of their own (a buffer outside the JS heap each, which costs more to allocate
   * and to collect than the copy itself).
   */
  copy(b: Uint8Array): Uint8Array {
    const region = this.alloc(b.length);
    region.set(b);
    return region;
  }

  /**
   * `region` (from `alloc`) is used only up to `used` bytes: if it is the latest region
   * carved, the rest goes back to the pool for the next `alloc`; otherwise nothing
   * happens (the rest is garbage with its chunk). The caller never touches the rest again.
   */
  shrinkLast(region: Uint8Array, used: number): void {
    if (region !== this.last || used > region.length) return;
    this.pos = alignUp(this.lastStart + used);
    this.last = undefined;
  }
}

function alignUp(n: number): number {
  return (n + POOL_ALIGN_BYTES - 1) & ~(POOL_ALIGN_BYTES - 1);
}

/** Length from which sameBytes compares natively (below it a loop costs less than the call). */
export const SAME_BYTES_NATIVE_MIN_BYTES = 64;

/** True if `a` and `b` hold the same bytes. */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  if (NodeBuffer !== undefined && a.length >= SAME_BYTES_NATIVE_MIN_BYTES)
    return NodeBuffer.compare(a, b) === 0;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** On Node, a Buffer sharing `b`'s memory (same offsets as `b`), else undefined. */
export function utf8WriterOf(b: Uint8Array): Utf8Writer | undefined {
  if (NodeBuffer === undefined) return undefined;
  return NodeBuffer.from(b.buffer, b.byteOffset, b.byteLength) as Uint8Array & Utf8Writer;
}
