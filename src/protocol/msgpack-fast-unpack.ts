/**
 * Fast path of the default serializer's decoder: one walk that checks and builds the
 * value, instead of validateMsgpack's walk followed by msgpackr's (and msgpackr's
 * string extraction, which pays a native call per message).
 *
 * It handles what the send side writes for plain data and refs (msgpack-fast-pack.ts):
 * maps with string keys, arrays, strings, integers of up to 32 bits, float64, nil,
 * booleans, and the fixext-1 extensions undefined (0x00), Set (0x73) and shardkit's
 * tagged value (0x53, decoded by the serializer's `tagged` function: a ref or a Map).
 * For anything else (binary, float32, 64-bit integers, bigint, typed arrays, timestamps,
 * the reserved byte, other extensions, invalid UTF-8, a non-string map key, a length
 * beyond the message, nesting beyond MESSAGE_DEPTH_MAX, trailing bytes) it gives up and
 * the caller takes the general path (validateMsgpack + msgpackr) from the start, which
 * also produces every error. An exception from `tagged` or from `new Set` gives up too.
 *
 * Invariant (property-tested against msgpackr in test/protocol/msgpack-fast-unpack.test.ts):
 * whenever it returns a value, the general path accepts the same bytes and returns an
 * equal value (same key order, same `__proto__` renaming as msgpackr: `__proto_`).
 * Giving up costs the walk done so far; the only side effect that can be repeated is a
 * call of `tagged`, which must therefore be free of side effects (RefCodec.decode is).
 *
 * Keys: ASCII keys of up to KEY_CACHE_LENGTH_MAX bytes are decoded once and kept in a
 * small direct-mapped cache (compared byte by byte on a hit), so a stream of messages of
 * the same shape allocates no key strings.
 */
import { MESSAGE_DEPTH_MAX } from "./msgpack-prepare.js";

const EXT_UNDEFINED = 0x00;
const EXT_SHARDKIT = 0x53;
const EXT_SET = 0x73;
/** Keys up to this many bytes are cached. */
const KEY_CACHE_LENGTH_MAX = 32;
/** Slots of the key cache (a power of two). */
const KEY_CACHE_SLOTS = 1024;
/** Without latin1Slice, ASCII strings up to this many bytes are built in JS. */
const JS_STRING_BYTES_MAX = 32;

/** Thrown (never escapes this module) to abandon the fast path. */
const GIVE_UP: unique symbol = Symbol("give up");
/** Returned by {@link FastUnpacker.unpack} when the caller must take the general path. */
export const FAST_UNPACK_GAVE_UP: unique symbol = Symbol("fast unpack gave up");

const fromCharCode = String.fromCharCode;
/** Strings of this many bytes or more are checked for ASCII a word at a time. */
const ASCII_WORD_SCAN_BYTES_MIN = 16;
/** A Node Buffer's latin1Slice, when the source is one (feature-detected, no node import). */
type MaybeBuffer = Uint8Array & {
  readonly latin1Slice?: (this: Uint8Array, start: number, end: number) => string;
};
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const keyCache: (string | undefined)[] = new Array(KEY_CACHE_SLOTS);
const scratch = new Float64Array(1);
const scratchBytes = new Uint8Array(scratch.buffer);
const littleEndian = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

function giveUp(): never {
  throw GIVE_UP;
}

/**
 * Decodes the common subset in one walk; see the module comment. Each call saves and
 * restores the cursor, so `tagged` may call it again.
 */
export class FastUnpacker {
  private src: Uint8Array = new Uint8Array(0);
  /**
   * A DataView of `viewSrc`, the last source a long string was scanned in (one source
   * buffer, a socket chunk, stays referenced until the next long string elsewhere).
   */
  private view: DataView | undefined = undefined;
  private viewSrc: Uint8Array | undefined = undefined;
  private pos = 0;
  private end = 0;

  constructor(private readonly tagged: (data: unknown) => unknown) {}

  /** The value in `src[start, end)`, or FAST_UNPACK_GAVE_UP. */
  unpack(src: Uint8Array, start: number, end: number): unknown {
    const outerSrc = this.src;
    const outerPos = this.pos;
    const outerEnd = this.end;
    this.src = src;
    this.pos = start;
    this.end = end;
    try {
      const value = this.value(0);
      return this.pos === end ? value : FAST_UNPACK_GAVE_UP;
    } catch {
      // GIVE_UP, or an error from `tagged` or `new Set`, or a RangeError from deep
      // recursion: the general path decides what it is.
      return FAST_UNPACK_GAVE_UP;
    } finally {
      this.src = outerSrc;
      this.pos = outerPos;
      this.end = outerEnd;
    }
  }

  private value(depth: number): unknown {
    if (depth > MESSAGE_DEPTH_MAX) giveUp();
    const b = this.src;
    const p = this.pos;
    if (p >= this.end) giveUp();
    const t = b[p] as number;
    this.pos = p + 1;
    if (t < 0x80) return t;
    if (t >= 0xe0) return t - 0x100;
    if (t < 0x90) return this.map(t & 0x0f, depth);
    if (t < 0xa0) return this.array(t & 0x0f, depth);
    if (t < 0xc0) return this.str(t & 0x1f);
    switch (t) {
      case 0xc0:
        return null;
      case 0xc2:
        return false;
      case 0xc3:
        return true;
      case 0xcb:
        return this.f64();
      case 0xcc:
        return this.uint(1);
      case 0xcd:
        return this.uint(2);
      case 0xce:
        return this.uint(4);
      case 0xd0: {
        const v = this.uint(1);
        return v < 0x80 ? v : v - 0x100;
      }
      case 0xd1: {
        const v = this.uint(2);
        return v < 0x8000 ? v : v - 0x10000;
      }
      case 0xd2:
        return this.uint(4) | 0;
      case 0xd4:
        return this.fixext1(depth);
      case 0xd9:
        return this.str(this.uint(1));
      case 0xda:
        return this.str(this.uint(2));
      case 0xdb:
        return this.str(this.uint(4));
      case 0xdc:
        return this.array(this.uint(2), depth);
      case 0xdd:
        return this.array(this.uint(4), depth);
      case 0xde:
        return this.map(this.uint(2), depth);
      case 0xdf:
        return this.map(this.uint(4), depth);
      default:
        return giveUp();
    }
  }

  /** A big-endian unsigned integer of `bytes` (1, 2 or 4) bytes. */
  private uint(bytes: number): number {
    const p = this.pos;
    if (p + bytes > this.end) giveUp();
    const b = this.src;
    this.pos = p + bytes;
    if (bytes === 1) return b[p] as number;
    if (bytes === 2) return ((b[p] as number) << 8) | (b[p + 1] as number);
    return (
      (b[p] as number) * 0x1000000 +
      (((b[p + 1] as number) << 16) | ((b[p + 2] as number) << 8) | (b[p + 3] as number))
    );
  }

  private f64(): number {
    const p = this.pos;
    if (p + 8 > this.end) giveUp();
    const b = this.src;
    if (littleEndian) for (let i = 0; i < 8; i++) scratchBytes[7 - i] = b[p + i] as number;
    else for (let i = 0; i < 8; i++) scratchBytes[i] = b[p + i] as number;
    this.pos = p + 8;
    return scratch[0] as number;
  }

  private map(count: number, depth: number): Record<string, unknown> {
    // Each entry takes at least two bytes (msgpackr's own bound).
    if (count > (this.end - this.pos) / 2) giveUp();
    const obj: Record<string, unknown> = {};
    for (let i = 0; i < count; i++) {
      let key = this.key();
      if (key === "__proto__") key = "__proto_";
      obj[key] = this.value(depth + 1);
    }
    return obj;
  }

  private array(count: number, depth: number): unknown[] {
    if (count > this.end - this.pos) giveUp();
    const arr = new Array<unknown>(count);
    for (let i = 0; i < count; i++) arr[i] = this.value(depth + 1);
    return arr;
  }

  private fixext1(depth: number): unknown {
    const p = this.pos;
    if (p + 2 > this.end || this.src[p + 1] !== 0) giveUp();
    const type = this.src[p];
    this.pos = p + 2;
    switch (type) {
      case EXT_UNDEFINED:
        return undefined;
      case EXT_SET:
        return new Set(this.value(depth + 1) as Iterable<unknown>);
      case EXT_SHARDKIT:
        return this.tagged(this.value(depth + 1));
      default:
        return giveUp();
    }
  }

  /** A map key: a string (any str format), from the cache when short and ASCII. */
  private key(): string {
    const p = this.pos;
    if (p >= this.end) giveUp();
    const t = this.src[p] as number;
    let length: number;
    if (t >= 0xa0 && t < 0xc0) {
      length = t & 0x1f;
      this.pos = p + 1;
    } else if (t === 0xd9 || t === 0xda || t === 0xdb) {
      this.pos = p + 1;
      length = this.uint(t === 0xd9 ? 1 : t === 0xda ? 2 : 4);
    } else return giveUp(); // msgpackr would stringify a non-string key
    if (length > KEY_CACHE_LENGTH_MAX) return this.str(length);
    const at = this.pos;
    if (at + length > this.end) giveUp();
    const b = this.src;
    let h = length;
    for (let i = 0; i < length; i++) h = (Math.imul(h, 31) + (b[at + i] as number)) | 0;
    const slot = h & (KEY_CACHE_SLOTS - 1);
    const cached = keyCache[slot];
    if (cached !== undefined && cached.length === length) {
      let i = 0;
      while (i < length && cached.charCodeAt(i) === b[at + i]) i++;
      if (i === length) {
        this.pos = at + length;
        return cached;
      }
    }
    const s = this.str(length);
    // s.length === length exactly when every byte is ASCII.
    if (s.length === length) keyCache[slot] = s;
    return s;
  }

  /**
   * A string of `length` UTF-8 bytes at the cursor. ASCII (the norm) is built without
   * TextDecoder, whose per-call cost dominates short strings: up to 4 bytes with one
   * fromCharCode call (single characters are then shared strings), longer ones with
   * Node's Buffer#latin1Slice when the source is a Buffer (as msgpackr does: identical
   * to UTF-8 for ASCII), else in chunks of 4 characters up to JS_STRING_BYTES_MAX.
   */
  private str(length: number): string {
    const p = this.pos;
    const e = p + length;
    if (e > this.end) giveUp();
    const b = this.src;
    let high = 0;
    let i = p;
    if (length >= ASCII_WORD_SCAN_BYTES_MIN) {
      // 8 bytes per step through a DataView (one view per source buffer): 12 instead of
      // 52 ns with byte loads for an 80-byte string.
      const v = this.viewOf(b);
      for (; i + 8 <= e; i += 8) high |= v.getUint32(i) | v.getUint32(i + 4);
    }
    for (; i < e; i++) high |= b[i] as number;
    // a byte >= 0x80 anywhere (the words' bytes and the single bytes alike)
    if ((high & 0x80808080) !== 0) return this.utf8(p, e);
    this.pos = e;
    switch (length) {
      case 0:
        return "";
      case 1:
        return fromCharCode(b[p] as number);
      case 2:
        return fromCharCode(b[p] as number, b[p + 1] as number);
      case 3:
        return fromCharCode(b[p] as number, b[p + 1] as number, b[p + 2] as number);
      case 4:
        return fromCharCode(
          b[p] as number,
          b[p + 1] as number,
          b[p + 2] as number,
          b[p + 3] as number,
        );
    }
    const latin1 = (b as MaybeBuffer).latin1Slice;
    if (latin1 !== undefined) return latin1.call(b, p, e);
    if (length > JS_STRING_BYTES_MAX) return this.utf8(p, e);
    let s = "";
    for (i = p; i + 4 <= e; i += 4)
      s += fromCharCode(b[i] as number, b[i + 1] as number, b[i + 2] as number, b[i + 3] as number);
    for (; i < e; i++) s += fromCharCode(b[i] as number);
    return s;
  }

  /** A DataView over `b` (kept while the source stays the same buffer). */
  private viewOf(b: Uint8Array): DataView {
    if (this.viewSrc === b && this.view !== undefined) return this.view;
    const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
    this.view = v;
    this.viewSrc = b;
    return v;
  }

  /** Strict UTF-8 (invalid bytes give up: msgpackr's decoders differ on them). */
  private utf8(p: number, e: number): string {
    let s: string;
    try {
      s = utf8.decode(this.src.subarray(p, e));
    } catch {
      return giveUp();
    }
    this.pos = e;
    return s;
  }
}
