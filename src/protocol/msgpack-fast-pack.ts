/**
 * Fast path of the default serializer for plain data: one walk that checks the value and
 * writes its MessagePack bytes, instead of prepareForPack's walk followed by msgpackr's.
 *
 * It handles the subset most messages live in: plain objects (prototype Object.prototype,
 * inherited `constructor`), arrays, strings, numbers, booleans, null and undefined,
 * nested below MESSAGE_DEPTH_MAX, and actor refs (RefCodec.isRef), which it writes as
 * shardkit's extension carrying `[TAG_REF, address, path]` exactly as msgpackr writes the
 * `Tagged` placeholder prepareForPack would put there (an ask carries its reply-to ref,
 * so this keeps every ask on the fast path). For
 * anything else (a Map, Set, Date, bigint, typed array, class instance, function,
 * a `__proto__` key, a container of 65 536 entries or more) it gives up and returns
 * undefined, and the caller takes the general path (prepareForPack + msgpackr), which
 * also produces the errors. Giving up is always safe: nothing is committed until the
 * whole value is written.
 *
 * Invariant (property-tested against msgpackr in test/protocol): for every value it
 * accepts, the bytes are exactly those msgpackr writes with shardkit's options, so the
 * wire format, and what the receiver decodes, do not depend on which path was taken.
 *
 * Output buffers are slabs of SLAB_BYTES handed out as non-overlapping views (like
 * msgpackr's own buffer): a view is never written again, so it may be queued as is. A
 * call made while another is in progress (from a RefCodec or a getter) gives up rather
 * than write into the region being filled. An exception from user code (a getter, a
 * proxy trap, RefCodec.isRef) propagates; nothing is committed then either.
 */
import { allocBytes, type Utf8Writer, utf8WriterOf } from "../base/bytes.js";
import { MESSAGE_DEPTH_MAX, SHARDKIT_EXTENSION_TYPE, TAG_REF } from "./msgpack-prepare.js";
import type { RefCodec, WireRefData } from "./serialization.js";

/** Size of a fresh output slab. */
const SLAB_BYTES = 32_768;
/** A message starts in a fresh slab when less than this is left in the current one. */
const SLAB_FREE_MIN_BYTES = 2_048;
/** msgpackr writes strings of this many UTF-16 units or more with native code. */
const JS_STRING_UNITS_MAX = 0x40;
const MAP16_ENTRIES_MAX = 0xffff;
/** Position returned when the value is outside the subset. */
const GIVE_UP = -1;
/** Position returned when the value does not fit in the rest of the slab. */
export const NO_ROOM = -2;

const EMPTY = new Uint8Array(0);
const encoder = new TextEncoder();

/** Packs plain data in one walk; see the module comment. */
export class FastPacker {
  private buf: Uint8Array = EMPTY;
  private view: DataView = new DataView(EMPTY.buffer);
  /** On Node, a Buffer over `buf` for long strings (base/bytes.ts). */
  private utf8: Utf8Writer | undefined = undefined;
  private pos = 0;
  private busy = false;

  constructor(private readonly refCodec: RefCodec | undefined) {}

  /**
   * The MessagePack bytes of `value` behind `room` free bytes (for the caller to fill
   * in), or undefined when `value` is outside the subset this packer handles.
   */
  pack(value: unknown, room: number): Uint8Array | undefined {
    // Re-entered from RefCodec.isRef or a getter: the slab region is in use.
    if (this.busy) return undefined;
    this.busy = true;
    try {
      if (this.buf.length - this.pos < SLAB_FREE_MIN_BYTES) this.newSlab();
      let end = this.writeValue(value, this.pos + room, 0);
      if (end === NO_ROOM && this.pos > 0) {
        this.newSlab();
        end = this.writeValue(value, room, 0);
      }
      if (end < 0) return undefined;
      const start = this.pos;
      this.pos = (end + 7) & ~7; // word-aligned starts, as msgpackr does
      return this.buf.subarray(start, end);
    } finally {
      this.busy = false;
    }
  }

  private newSlab(): void {
    // Unspecified contents: a message is a view of written bytes only (base/bytes.ts).
    this.buf = allocBytes(SLAB_BYTES);
    this.view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
    this.utf8 = utf8WriterOf(this.buf);
    this.pos = 0;
  }

  /** Writes `v` at `p`; returns the position after it, or GIVE_UP / NO_ROOM. */
  private writeValue(v: unknown, p: number, depth: number): number {
    switch (typeof v) {
      case "string":
        return this.writeString(v, p);
      case "number":
        return this.writeNumber(v, p);
      case "boolean":
        if (p + 1 > this.buf.length) return NO_ROOM;
        this.buf[p] = v ? 0xc3 : 0xc2;
        return p + 1;
      case "undefined":
        // msgpackr's undefined: fixext 1, type 0, data 0.
        if (p + 3 > this.buf.length) return NO_ROOM;
        this.buf[p] = 0xd4;
        this.buf[p + 1] = 0;
        this.buf[p + 2] = 0;
        return p + 3;
      case "object":
        if (v === null) {
          if (p + 1 > this.buf.length) return NO_ROOM;
          this.buf[p] = 0xc0;
          return p + 1;
        }
        return this.writeObject(v, p, depth);
      default:
        return GIVE_UP;
    }
  }

  private writeObject(obj: object, p: number, depth: number): number {
    if (depth >= MESSAGE_DEPTH_MAX) return GIVE_UP;
    const codec = this.refCodec;
    if (codec?.isRef(obj)) return this.writeRef(codec, obj, p);
    const proto: unknown = Object.getPrototypeOf(obj);
    // msgpackr picks its encoding by `constructor`: an own `constructor` key differs.
    if (proto === Array.prototype) {
      return Array.isArray(obj) && obj.constructor === Array
        ? this.writeArray(obj, p, depth)
        : GIVE_UP;
    }
    if (proto !== Object.prototype || obj.constructor !== Object) return GIVE_UP;
    return this.writeMap(obj as Record<string, unknown>, p, depth);
  }

  /**
   * An actor ref as msgpackr writes prepareForPack's placeholder for it: the one-byte
   * "tag" extension header (fixext 1 of SHARDKIT_EXTENSION_TYPE with a 0 data byte),
   * then the array `[TAG_REF, address, path]`. A RefCodec answer of the wrong shape
   * gives up, so the general path reports it.
   */
  private writeRef(codec: RefCodec, ref: object, p: number): number {
    const askId = codec.askId?.(ref) ?? -1;
    if (askId > 0 && codec.localAddress !== undefined)
      return this.writeAskRef(codec.localAddress, askId, p);
    const data: unknown = codec.encode(ref);
    if (typeof data !== "object" || data === null) return GIVE_UP;
    const { address, path } = data as WireRefData;
    if (typeof address !== "string" || typeof path !== "string") return GIVE_UP;
    const q = this.writeRefHead(address, p);
    return q < 0 ? q : this.writeString(path, q);
  }

  /** The ref's extension header, `[TAG_REF` and the address: where the path goes. */
  private writeRefHead(address: string, p: number): number {
    if (p + 5 > this.buf.length) return NO_ROOM;
    const b = this.buf;
    b[p] = 0xd4;
    b[p + 1] = SHARDKIT_EXTENSION_TYPE;
    b[p + 2] = 0;
    b[p + 3] = 0x93; // fixarray of 3
    b[p + 4] = TAG_REF; // positive fixint
    return this.writeString(address, p + 5);
  }

  /**
   * writeRef of `{ address, path: "/temp/$ask<id>#<id>" }` (see RefCodec.askId), the
   * path's bytes written from the id's digits: the same bytes, without the strings.
   */
  private writeAskRef(address: string, id: number, p: number): number {
    if (!Number.isSafeInteger(id)) return GIVE_UP;
    let digits = 1;
    for (let x = id; x >= 10; x = Math.floor(x / 10)) digits++;
    const pathBytes = ASK_PATH_PREFIX_BYTES.length + 2 * digits + 1;
    let q = this.writeRefHead(address, p);
    if (q < 0) return q;
    const b = this.buf;
    // at most 10 + 2 * 16 + 1 bytes: a fixstr or a str8, as msgpackr writes them
    const head = pathBytes < 0x20 ? 1 : 2;
    if (q + head + pathBytes > b.length) return NO_ROOM;
    if (head === 1) b[q++] = 0xa0 | pathBytes;
    else {
      b[q] = 0xd9;
      b[q + 1] = pathBytes;
      q += 2;
    }
    for (let i = 0; i < ASK_PATH_PREFIX_BYTES.length; i++)
      b[q++] = ASK_PATH_PREFIX_BYTES[i] as number;
    writeDigits(b, q, id, digits);
    q += digits;
    b[q++] = 0x23; // "#"
    writeDigits(b, q, id, digits);
    return q + digits;
  }

  /** msgpackr (useRecords: false) always writes a map16 and fills in its size after. */
  private writeMap(obj: Record<string, unknown>, p: number, depth: number): number {
    if (p + 3 > this.buf.length) return NO_ROOM;
    this.buf[p] = 0xde;
    let q = p + 3;
    let n = 0;
    // for-in with an own-property check, not Object.keys: the same keys in the same
    // order (the prototype is Object.prototype), without an array per object.
    for (const key in obj) {
      if (!hasOwn.call(obj, key)) continue;
      // `__proto__` is refused by prepareForPack; an own `hasOwnProperty` changes which
      // keys msgpackr writes.
      if (key === "__proto__" || key === "hasOwnProperty" || ++n > MAP16_ENTRIES_MAX)
        return GIVE_UP;
      q = this.writeString(key, q);
      if (q < 0) return q;
      q = this.writeValue(obj[key], q, depth + 1);
      if (q < 0) return q;
    }
    this.buf[p + 1] = n >>> 8;
    this.buf[p + 2] = n & 0xff;
    return q;
  }

  private writeArray(arr: readonly unknown[], p: number, depth: number): number {
    const n = arr.length;
    let q = p;
    if (n < 0x10) {
      if (q + 1 > this.buf.length) return NO_ROOM;
      this.buf[q++] = 0x90 | n;
    } else if (n < 0x10000) {
      if (q + 3 > this.buf.length) return NO_ROOM;
      this.buf[q] = 0xdc;
      this.buf[q + 1] = n >>> 8;
      this.buf[q + 2] = n & 0xff;
      q += 3;
    } else return GIVE_UP;
    for (let i = 0; i < n; i++) {
      q = this.writeValue(arr[i], q, depth + 1);
      if (q < 0) return q;
    }
    return q;
  }

  private writeNumber(v: number, p: number): number {
    if (p + 9 > this.buf.length) return NO_ROOM;
    return packNumber(this.buf, this.view, v, p);
  }

  private writeString(s: string, p: number): number {
    return packString(this.buf, this.view, this.utf8, s, p);
  }
}

/**
 * `v` at `p` as msgpackr writes a number (the caller checked that 9 bytes fit): the
 * smallest integer form for a 32-bit integer, a float64 for anything else.
 */
export function packNumber(b: Uint8Array, view: DataView, v: number, p: number): number {
  if (v >>> 0 === v) {
    if (v < 0x80) {
      b[p] = v;
      return p + 1;
    }
    if (v < 0x100) {
      b[p] = 0xcc;
      b[p + 1] = v;
      return p + 2;
    }
    if (v < 0x10000) {
      b[p] = 0xcd;
      b[p + 1] = v >>> 8;
      b[p + 2] = v & 0xff;
      return p + 3;
    }
    b[p] = 0xce;
    view.setUint32(p + 1, v);
    return p + 5;
  }
  if (v >> 0 === v) {
    if (v >= -0x20) {
      b[p] = 0x100 + v;
      return p + 1;
    }
    if (v >= -0x80) {
      b[p] = 0xd0;
      b[p + 1] = v + 0x100;
      return p + 2;
    }
    if (v >= -0x8000) {
      b[p] = 0xd1;
      view.setInt16(p + 1, v);
      return p + 3;
    }
    b[p] = 0xd2;
    view.setInt32(p + 1, v);
    return p + 5;
  }
  b[p] = 0xcb;
  view.setFloat64(p + 1, v);
  return p + 9;
}

/**
 * Strings as msgpackr writes them: the header sized for the UTF-8 byte length, then
 * the bytes (or NO_ROOM when they may not fit in `b`); `utf8`: a Buffer over `b`; below JS_STRING_UNITS_MAX UTF-16 units with msgpackr's JS encoder (a lone
 * surrogate becomes 3 bytes), from there with the platform encoder, as msgpackr's
 * native path does (a lone surrogate becomes U+FFFD).
 */
export function packString(
  b: Uint8Array,
  view: DataView,
  utf8: Utf8Writer | undefined,
  s: string,
  p: number,
): number {
  const units = s.length;
  const head = units < 0x20 ? 1 : units < 0x100 ? 2 : units < 0x10000 ? 3 : 5;
  const at = p + head;
  if (at + units * 3 > b.length) return NO_ROOM;
  let q: number;
  if (units < JS_STRING_UNITS_MAX) q = writeUtf8Js(s, b, at);
  else if (utf8 !== undefined) q = at + utf8.utf8Write(s, at, units * 3);
  else q = at + encoder.encodeInto(s, b.subarray(at, at + units * 3)).written;
  const bytes = q - at;
  const need = bytes < 0x20 ? 1 : bytes < 0x100 ? 2 : bytes < 0x10000 ? 3 : 5;
  if (need !== head) {
    // More bytes than units (non-ASCII): msgpackr moves the bytes for a longer header.
    if (q + need - head > b.length) return NO_ROOM;
    b.copyWithin(p + need, at, q);
    q += need - head;
  }
  if (need === 1) b[p] = 0xa0 | bytes;
  else if (need === 2) {
    b[p] = 0xd9;
    b[p + 1] = bytes;
  } else if (need === 3) {
    b[p] = 0xda;
    b[p + 1] = bytes >>> 8;
    b[p + 2] = bytes & 0xff;
  } else {
    b[p] = 0xdb;
    view.setUint32(p + 1, bytes);
  }
  return q;
}

const hasOwn = Object.prototype.hasOwnProperty;

/** "/temp/$ask" in ASCII: the reply target of an ask, up to its id. */
const ASK_PATH_PREFIX_BYTES = new TextEncoder().encode("/temp/$ask");

/** The `digits` decimal digits of `n` (a safe integer >= 0) at `at`. */
function writeDigits(b: Uint8Array, at: number, n: number, digits: number): void {
  let x = n;
  for (let i = at + digits - 1; i >= at; i--) {
    const next = Math.floor(x / 10);
    b[i] = 48 + (x - next * 10);
    x = next;
  }
}

/** msgpackr's JS UTF-8 encoder, byte for byte (a lone surrogate becomes 3 bytes). */
function writeUtf8Js(s: string, b: Uint8Array, at: number): number {
  let q = at;
  for (let i = 0; i < s.length; i++) {
    let c1 = s.charCodeAt(i);
    if (c1 < 0x80) b[q++] = c1;
    else if (c1 < 0x800) {
      b[q++] = (c1 >> 6) | 0xc0;
      b[q++] = (c1 & 0x3f) | 0x80;
    } else {
      const c2 = s.charCodeAt(i + 1);
      if ((c1 & 0xfc00) === 0xd800 && (c2 & 0xfc00) === 0xdc00) {
        c1 = 0x10000 + ((c1 & 0x03ff) << 10) + (c2 & 0x03ff);
        i++;
        b[q++] = (c1 >> 18) | 0xf0;
        b[q++] = ((c1 >> 12) & 0x3f) | 0x80;
        b[q++] = ((c1 >> 6) & 0x3f) | 0x80;
        b[q++] = (c1 & 0x3f) | 0x80;
      } else {
        b[q++] = (c1 >> 12) | 0xe0;
        b[q++] = ((c1 >> 6) & 0x3f) | 0x80;
        b[q++] = (c1 & 0x3f) | 0x80;
      }
    }
  }
  return q;
}
