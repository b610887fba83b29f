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
 * - `utf8WriterOf(b)`: on Node, a Buffer over `b`'s memory, whose `utf8Write` writes a
 *   string's UTF-8 bytes in place, without the view `TextEncoder#encodeInto` needs. It
 *   encodes exactly as `encodeInto` does (a lone surrogate becomes U+FFFD), and it is
 *   what msgpackr itself calls on Node.
 */

/** What this module uses of Node's Buffer class. */
interface BufferClass {
  allocUnsafeSlow(size: number): Uint8Array;
  from(buffer: ArrayBufferLike, byteOffset: number, length: number): Uint8Array;
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

/** On Node, a Buffer sharing `b`'s memory (same offsets as `b`), else undefined. */
export function utf8WriterOf(b: Uint8Array): Utf8Writer | undefined {
  if (NodeBuffer === undefined) return undefined;
  return NodeBuffer.from(b.buffer, b.byteOffset, b.byteLength) as Uint8Array & Utf8Writer;
}
