/**
 * Non-cryptographic string hashes used to map entity ids to shards and to place shards
 * on regions. They must be bit-exact and stable across processes, Node versions and
 * releases, because every node of a cluster has to compute the same shard for the same
 * entity id; changing one of them is a breaking change of the wire contract.
 *
 * - `murmur3_32`: MurmurHash3 x86_32 (Austin Appleby), shardkit's default. Returns an
 *   UNSIGNED 32-bit integer (0 .. 2^32-1), the same value as `mmh3.hash(x, signed=False)`.
 * - `murmur2`: the Kafka variant of MurmurHash2 (seed 0x9747b28c), returns a SIGNED int32,
 *   for Kafka-partition-aligned shard ids.
 * - `javaStringHashCode`: Java's `String.hashCode` over UTF-16 code units, a SIGNED int32,
 *   for compatibility with Akka/Pekko `HashCodeMessageExtractor`.
 *
 * Strings are hashed over their UTF-8 encoding (TextEncoder); lone surrogates are encoded
 * as U+FFFD, as TextEncoder does.
 */

const utf8Encoder = new TextEncoder();

/** UTF-8 bytes of `s` (lone surrogates become U+FFFD). */
export function utf8Encode(s: string): Uint8Array {
  return utf8Encoder.encode(s);
}

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

function rotl32(x: number, r: number): number {
  return (x << r) | (x >>> (32 - r));
}

function fmix32(h: number): number {
  let x = h;
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

function murmur3MixK(k: number): number {
  return Math.imul(rotl32(Math.imul(k, C1), 15), C2);
}

/**
 * MurmurHash3 x86_32 of `bytes` with `seed` (treated as uint32).
 * @returns an unsigned 32-bit integer in [0, 2^32).
 */
export function murmur3_32(bytes: Uint8Array, seed = 0): number {
  const len = bytes.length;
  const blocks = len & ~3;
  let h = seed >>> 0;
  for (let i = 0; i < blocks; i += 4) {
    const k =
      (bytes[i] as number) |
      ((bytes[i + 1] as number) << 8) |
      ((bytes[i + 2] as number) << 16) |
      ((bytes[i + 3] as number) << 24);
    h ^= murmur3MixK(k);
    h = rotl32(h, 13);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  let k = 0;
  const tail = len & 3;
  if (tail === 3) k ^= (bytes[blocks + 2] as number) << 16;
  if (tail >= 2) k ^= (bytes[blocks + 1] as number) << 8;
  if (tail >= 1) {
    k ^= bytes[blocks] as number;
    h ^= murmur3MixK(k);
  }
  return fmix32(h ^ len);
}

/** MurmurHash3 x86_32 of the UTF-8 encoding of `s`; unsigned 32-bit result. */
export function murmur3OfString(s: string, seed = 0): number {
  // Hot path (every sharded message hashes its entity id): ASCII strings are their own
  // UTF-8 bytes, so copy the char codes into a reused buffer instead of encoding.
  const n = s.length;
  if (n > ASCII_SCRATCH_BYTES) return murmur3_32(utf8Encode(s), seed);
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c > 0x7f) return murmur3_32(utf8Encode(s), seed);
    asciiScratch[i] = c;
  }
  return murmur3_32(asciiScratch.subarray(0, n), seed);
}

const ASCII_SCRATCH_BYTES = 256;
const asciiScratch = new Uint8Array(ASCII_SCRATCH_BYTES);

/** A snapshot of a Murmur3Stream: the hash so far, the bytes of a block not yet full. */
export interface Murmur3Snapshot {
  readonly h: number;
  /** The pending bytes, little-endian (at most three). */
  readonly k: number;
  readonly pending: number;
  /** Bytes fed so far. */
  readonly length: number;
}

/**
 * MurmurHash3 x86_32 fed with ASCII strings one after another: `finish()` is murmur3_32
 * of their concatenated bytes. Its state can be saved (`snapshot`) and taken up again
 * (`Murmur3Stream.from`), so a hash over a sequence can restart from where a sequence
 * with the same beginning left off.
 */
export class Murmur3Stream {
  private h: number;
  private k = 0;
  private pending = 0;
  private length = 0;

  constructor(seed = 0) {
    this.h = seed >>> 0;
  }

  /** A stream in the state of `s`. */
  static from(s: Murmur3Snapshot): Murmur3Stream {
    const m = new Murmur3Stream();
    m.h = s.h;
    m.k = s.k;
    m.pending = s.pending;
    m.length = s.length;
    return m;
  }

  snapshot(): Murmur3Snapshot {
    return { h: this.h, k: this.k, pending: this.pending, length: this.length };
  }

  /** Feeds the bytes of `s` if it is all ASCII (true); false, and nothing fed, if not. */
  feedAscii(s: string): boolean {
    for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
    let { h, k, pending } = this;
    for (let i = 0; i < s.length; i++) {
      k |= s.charCodeAt(i) << (pending * 8);
      if (++pending === 4) {
        h ^= murmur3MixK(k);
        h = rotl32(h, 13);
        h = (Math.imul(h, 5) + 0xe6546b64) | 0;
        k = 0;
        pending = 0;
      }
    }
    this.h = h;
    this.k = k;
    this.pending = pending;
    this.length += s.length;
    return true;
  }

  /** murmur3_32 of everything fed (the stream itself is unchanged). */
  finish(): number {
    let h = this.h;
    if (this.pending > 0) h ^= murmur3MixK(this.k);
    return fmix32(h ^ this.length);
  }
}

/** The reused buffer of asciiJoined (it grows to the longest joined string written). */
let joinedScratch = new Uint8Array(4_096);

/**
 * The bytes of the strings `at(0) .. at(count - 1)` joined by `separator`, when all of it
 * is ASCII (its own UTF-8 encoding), else undefined. A view of a buffer reused by the
 * next call: hash it at once.
 */
export function asciiJoined(
  count: number,
  at: (i: number) => string,
  separator: string,
): Uint8Array | undefined {
  let n = 0;
  for (let i = 0; i < count; i++) {
    const s = at(i);
    const sep = i === 0 ? "" : separator;
    if (n + sep.length + s.length > joinedScratch.length) {
      const next = new Uint8Array(Math.max(joinedScratch.length * 2, n + sep.length + s.length));
      next.set(joinedScratch.subarray(0, n));
      joinedScratch = next;
    }
    for (let j = 0; j < sep.length + s.length; j++) {
      const c = j < sep.length ? sep.charCodeAt(j) : s.charCodeAt(j - sep.length);
      if (c > 0x7f) return undefined;
      joinedScratch[n++] = c;
    }
  }
  return joinedScratch.subarray(0, n);
}

/**
 * murmur3OfString of the strings `at(0) .. at(count - 1)` joined by `separator`, without
 * building the joined string or its UTF-8 copy when all of it is ASCII (a gossip's seen
 * digest joins up to a thousand node strings); the same value as
 * `murmur3OfString(strings.join(separator), seed)`.
 */
export function murmur3OfJoined(
  count: number,
  at: (i: number) => string,
  separator: string,
  seed = 0,
): number {
  const bytes = asciiJoined(count, at, separator);
  if (bytes !== undefined) return murmur3_32(bytes, seed);
  const all: string[] = [];
  for (let k = 0; k < count; k++) all.push(at(k));
  return murmur3OfString(all.join(separator), seed);
}

/**
 * Java `String.hashCode`: `h = 31 * h + c` over the UTF-16 code units of `s` (a character
 * outside the BMP contributes its two surrogates), with int32 wrap-around.
 * @returns a signed 32-bit integer.
 */
export function javaStringHashCode(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return h;
}

const MURMUR2_SEED = 0x9747b28c;
const MURMUR2_M = 0x5bd1e995;

/**
 * Kafka-compatible MurmurHash2 of `bytes` (seed 0x9747b28c, m = 0x5bd1e995, r = 24),
 * bit-identical to `org.apache.kafka.common.utils.Utils.murmur2`.
 * @returns a signed 32-bit integer.
 */
export function murmur2(bytes: Uint8Array): number {
  const len = bytes.length;
  const blocks = len & ~3;
  let h = MURMUR2_SEED ^ len;
  for (let i = 0; i < blocks; i += 4) {
    let k =
      (bytes[i] as number) |
      ((bytes[i + 1] as number) << 8) |
      ((bytes[i + 2] as number) << 16) |
      ((bytes[i + 3] as number) << 24);
    k = Math.imul(k, MURMUR2_M);
    k ^= k >>> 24;
    k = Math.imul(k, MURMUR2_M);
    h = Math.imul(h, MURMUR2_M) ^ k;
  }
  const tail = len & 3;
  if (tail === 3) h ^= (bytes[blocks + 2] as number) << 16;
  if (tail >= 2) h ^= (bytes[blocks + 1] as number) << 8;
  if (tail >= 1) {
    h ^= bytes[blocks] as number;
    h = Math.imul(h, MURMUR2_M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, MURMUR2_M);
  h ^= h >>> 15;
  return h | 0;
}
