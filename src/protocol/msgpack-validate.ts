/**
 * Strict structural check of a MessagePack message before msgpackr decodes it.
 *
 * msgpackr is lenient where the wire must not be: the reserved byte 0xC1 decodes to a
 * marker object, extension types that shardkit never writes (bundled strings, records,
 * Error, RegExp, structured-clone ids) are interpreted, and container headers are trusted
 * before the bytes behind them are seen. This walk runs first and throws
 * SerializationError unless the bytes are exactly one well-formed value of the subset the
 * default serializer writes (msgpack-serializer.ts):
 *
 * - every format byte except 0xC1;
 * - extensions: 0x00 (undefined), 0x53 (shardkit tagged) and 0x73 (Set) only as fixext 1
 *   with a zero filler followed by their one value, 0x42 (bigint) and 0x74 (typed array)
 *   with a non-empty body, 0xFF (timestamp) of 4, 8 or 12 bytes; nothing else;
 * - every declared length fits in the bytes left: a string, binary or extension body of
 *   n bytes needs n bytes, an array of n items needs n bytes and a map of n entries 2n
 *   (each value takes at least one byte), so nothing decoded from a frame can be larger
 *   than the frame;
 * - nesting at most MESSAGE_DEPTH_MAX deep, and no bytes after the value.
 *
 * Pure and allocation-free; time is linear in the input.
 */
import { SerializationError } from "./errors.js";
import { MESSAGE_DEPTH_MAX } from "./msgpack-prepare.js";
import { MSGPACK_SERIALIZER_ID } from "./serialization.js";

const EXT_UNDEFINED = 0x00;
const EXT_BIGINT = 0x42;
const EXT_SHARDKIT = 0x53;
const EXT_SET = 0x73;
const EXT_TYPED_ARRAY = 0x74;
const EXT_TIMESTAMP = 0xff;

function bad(reason: string, at: number): SerializationError {
  return new SerializationError(`invalid MessagePack at byte ${at}: ${reason}`, {
    serializerId: MSGPACK_SERIALIZER_ID,
  });
}

class Walk {
  constructor(
    private readonly b: Uint8Array,
    private pos: number,
    private readonly end: number,
  ) {}

  run(): void {
    this.value(0);
    if (this.pos !== this.end) throw bad(`${this.end - this.pos} bytes after the value`, this.pos);
  }

  private need(n: number, what: string): void {
    if (n > this.end - this.pos)
      throw bad(`${what} needs ${n} bytes, ${this.end - this.pos} left`, this.pos);
  }

  private u8(): number {
    this.need(1, "a byte");
    return this.b[this.pos++] as number;
  }

  private uint(bytes: 1 | 2 | 4): number {
    this.need(bytes, "a length");
    const b = this.b;
    const p = this.pos;
    this.pos += bytes;
    if (bytes === 1) return b[p] as number;
    if (bytes === 2) return ((b[p] as number) << 8) | (b[p + 1] as number);
    return (
      (b[p] as number) * 0x1000000 +
      (((b[p + 1] as number) << 16) | ((b[p + 2] as number) << 8) | (b[p + 3] as number))
    );
  }

  private skip(n: number, what: string): undefined {
    this.need(n, what);
    this.pos += n;
  }

  private value(depth: number): undefined {
    if (depth > MESSAGE_DEPTH_MAX) throw bad(`nested deeper than ${MESSAGE_DEPTH_MAX}`, this.pos);
    const at = this.pos;
    const t = this.u8();
    if (t <= 0x7f || t >= 0xe0) return undefined; // fixint
    if (t <= 0x8f) return this.items((t & 0x0f) * 2, depth, "map");
    if (t <= 0x9f) return this.items(t & 0x0f, depth, "array");
    if (t <= 0xbf) return this.skip(t & 0x1f, "a string");
    switch (t) {
      case 0xc0:
      case 0xc2:
      case 0xc3:
        return undefined;
      case 0xc1:
        throw bad("reserved byte 0xC1", at);
      case 0xc4:
      case 0xd9:
        return this.skip(this.uint(1), t === 0xc4 ? "a binary" : "a string");
      case 0xc5:
      case 0xda:
        return this.skip(this.uint(2), t === 0xc5 ? "a binary" : "a string");
      case 0xc6:
      case 0xdb:
        return this.skip(this.uint(4), t === 0xc6 ? "a binary" : "a string");
      case 0xc7:
        return this.ext(this.uint(1), at, depth);
      case 0xc8:
        return this.ext(this.uint(2), at, depth);
      case 0xc9:
        return this.ext(this.uint(4), at, depth);
      case 0xca:
        return this.skip(4, "a float32");
      case 0xcb:
        return this.skip(8, "a float64");
      case 0xcc:
      case 0xd0:
        return this.skip(1, "an int");
      case 0xcd:
      case 0xd1:
        return this.skip(2, "an int");
      case 0xce:
      case 0xd2:
        return this.skip(4, "an int");
      case 0xcf:
      case 0xd3:
        return this.skip(8, "an int");
      case 0xd4:
        return this.ext(1, at, depth);
      case 0xd5:
        return this.ext(2, at, depth);
      case 0xd6:
        return this.ext(4, at, depth);
      case 0xd7:
        return this.ext(8, at, depth);
      case 0xd8:
        return this.ext(16, at, depth);
      case 0xdc:
        return this.items(this.uint(2), depth, "array");
      case 0xdd:
        return this.items(this.uint(4), depth, "array");
      case 0xde:
        return this.items(this.uint(2) * 2, depth, "map");
      default: // 0xdf
        return this.items(this.uint(4) * 2, depth, "map");
    }
  }

  /** `count` values (a map's keys and values counted apart). */
  private items(count: number, depth: number, what: string): undefined {
    this.need(count, `${what} of ${count} items`);
    for (let i = 0; i < count; i++) this.value(depth + 1);
  }

  /** An extension of `length` body bytes; the type byte is next. */
  private ext(length: number, at: number, depth: number): undefined {
    const type = this.u8();
    this.need(length, `extension ${type}`);
    switch (type) {
      case EXT_UNDEFINED:
      case EXT_SHARDKIT:
      case EXT_SET: {
        const filler = this.b[this.pos] as number;
        if (length !== 1 || filler !== 0)
          throw bad(`extension ${type} must be fixext 1 with a zero filler`, at);
        this.pos += 1;
        if (type !== EXT_UNDEFINED) this.value(depth + 1);
        return;
      }
      case EXT_BIGINT:
      case EXT_TYPED_ARRAY:
        if (length === 0) throw bad(`empty extension ${type}`, at);
        this.pos += length;
        return;
      case EXT_TIMESTAMP:
        if (length !== 4 && length !== 8 && length !== 12)
          throw bad(`timestamp of ${length} bytes`, at);
        this.pos += length;
        return;
      default:
        throw bad(`extension type ${type} is not used by shardkit`, at);
    }
  }
}

/**
 * Throws SerializationError unless `bytes[start, end)` is exactly one well-formed value
 * of the subset the default serializer writes (see the module comment).
 */
export function validateMsgpack(bytes: Uint8Array, start = 0, end = bytes.length): void {
  if (start >= end) throw bad("empty message", start);
  new Walk(bytes, start, end).run();
}
