/**
 * The Gossip message on the wire without copies of its content.
 *
 * A gossip message is the MessagePack map `{to, gb, s, mh?, c?}` (membership-messages.ts)
 * whose `gb` is the gossip's content: an encoded gossip shared by every message of that
 * content (gossip-codec.ts, encodeGossip). Packed as one value, the content was copied
 * into every message; read back as one value, it was copied out of every received
 * message again (msgpackr reads a typed array, which is an extension, as a copy). At
 * 1 000 members these copies of tens of kilobytes were most of the memory the simulator
 * allocated outside the JS heap, and such memory forces young-generation collections
 * (docs/cluster-scale.md, "Session 18").
 *
 * - `gossipMessageParts` writes the message as parts: the map header with the `to` pair
 *   and the extension header of `gb`, the content itself, and the remaining pairs. The
 *   parts one after the other are exactly the bytes msgpackr writes for the map
 *   (test/cluster/gossip-message-wire.test.ts compares them on random messages), so any
 *   member, of this version or an earlier one, reads them as before; remoting writes the
 *   parts straight into the frame (protocol/framing.ts, FramePayload).
 * - `readGossipMessage` finds the content in a received message of that layout and
 *   returns it as a view of the received bytes (decodeGossip copies what it keeps); the
 *   other pairs are decoded as a map of their own. A message of any other layout (or one
 *   whose other pairs do not decode) is `NOT_CANONICAL`: the caller decodes it whole, as
 *   before, and that decoder decides what is malformed.
 */
import { fail } from "../../base/assert.js";
import { BytePool } from "../../base/bytes.js";
import type { Serializer } from "../../protocol/serialization.js";

/** The pairs of a gossip message besides `to` and `gb`, in the order they are written. */
export interface GossipMessageRest {
  /** The seen set: bitmap elements (gossip-codec.ts EncodedGossip.seen). */
  readonly s: readonly number[];
  /** The sender's member-list hash, if any. */
  readonly mh?: readonly [number, number];
  /** 1 for a compact gossip. */
  readonly c?: 1;
}

/** Returned by readGossipMessage for a message it leaves to the general decoder. */
export const NOT_CANONICAL: unique symbol = Symbol("not canonical");

const MAP16 = 0xde;
const EXT8 = 0xc7;
const EXT16 = 0xc8;
const EXT32 = 0xc9;
/** msgpackr's extension type of typed arrays ("t"), and its code for Uint8Array. */
const EXT_TYPED_ARRAY = 0x74;
const TYPED_UINT8 = 0x01;
const FIXARRAY = 0x90;
const FIXSTR = 0xa0;
const FIXSTR_MASK = 0xe0;
const STR8 = 0xd9;
const STR16 = 0xda;
const STR32 = 0xdb;
/** The keys as fixstr: "to" and "gb". */
const KEY_TO = [0xa2, 0x74, 0x6f] as const;
const KEY_GB = [0xa2, 0x67, 0x62] as const;

/**
 * The message `{to, gb: content, ...rest}` as parts whose concatenation is the map's
 * MessagePack encoding (see the module comment). `serializer` is the default (msgpackr)
 * serializer, which packs the pairs around the content.
 */
export function gossipMessageParts(
  serializer: Serializer,
  to: string,
  content: Uint8Array,
  rest: GossipMessageRest,
): readonly Uint8Array[] {
  const tail: unknown[] = ["s", rest.s];
  if (rest.mh !== undefined) tail.push("mh", rest.mh);
  if (rest.c !== undefined) tail.push("c", rest.c);
  const pairs = 2 + tail.length / 2;
  // ["to", to, "gb"] packed is a fixarray header and the three values after one another
  const toPair = serializer.toBinary(["to", to, "gb"]);
  const tailPairs = serializer.toBinary(tail);
  if (toPair[0] !== FIXARRAY + 3 || tailPairs[0] !== FIXARRAY + tail.length)
    fail("gossipMessageParts: the serializer is not MessagePack");
  const n = content.length + 1; // the typed-array code is part of the extension's data
  const extHeaderBytes = (n < 0x100 ? 2 : n < 0x10000 ? 3 : 5) + 2;
  // exactly sized: a subarray of an array this small would move it out of the JS heap
  const head = new Uint8Array(3 + toPair.length - 1 + extHeaderBytes);
  head[0] = MAP16;
  head[1] = pairs >>> 8;
  head[2] = pairs & 0xff;
  head.set(toPair.subarray(1), 3);
  let p = 3 + toPair.length - 1;
  if (n < 0x100) {
    head[p++] = EXT8;
    head[p++] = n;
  } else if (n < 0x10000) {
    head[p++] = EXT16;
    head[p++] = n >>> 8;
    head[p++] = n & 0xff;
  } else {
    head[p++] = EXT32;
    head[p++] = n >>> 24;
    head[p++] = (n >>> 16) & 0xff;
    head[p++] = (n >>> 8) & 0xff;
    head[p++] = n & 0xff;
  }
  head[p++] = EXT_TYPED_ARRAY;
  head[p++] = TYPED_UINT8;
  return [head, content, tailPairs.subarray(1)];
}

/** The copies of received pairs around the content (each a few hundred bytes at most). */
const restBytes = new BytePool();

function matches(bytes: Uint8Array, at: number, expected: readonly number[]): boolean {
  if (at + expected.length > bytes.length) return false;
  for (let i = 0; i < expected.length; i++) if (bytes[at + i] !== expected[i]) return false;
  return true;
}

function u16(b: Uint8Array, at: number): number {
  return ((b[at] as number) << 8) | (b[at + 1] as number);
}

function u32(b: Uint8Array, at: number): number {
  return (b[at] as number) * 0x1000000 + (((b[at + 1] as number) << 16) | u16(b, at + 2));
}

/** The type bytes of the 8-, 16- and 32-bit length forms of one MessagePack family. */
type LengthForms = readonly [t8: number, t16: number, t32: number];
const STR_FORMS: LengthForms = [STR8, STR16, STR32];
const EXT_FORMS: LengthForms = [EXT8, EXT16, EXT32];

/**
 * The length in the header at `p` if it is one of `forms`, and where what follows the
 * header starts; undefined for another type or a header cut short.
 */
function lengthAt(
  bytes: Uint8Array,
  p: number,
  forms: LengthForms,
): { readonly length: number; readonly next: number } | undefined {
  const t = bytes[p];
  const size = t === forms[0] ? 1 : t === forms[1] ? 2 : t === forms[2] ? 4 : 0;
  if (size === 0 || p + 1 + size > bytes.length) return undefined;
  const length =
    size === 1 ? (bytes[p + 1] as number) : size === 2 ? u16(bytes, p + 1) : u32(bytes, p + 1);
  return { length, next: p + 1 + size };
}

/**
 * The pairs of a gossip message with `gb` as a view of `bytes`, or NOT_CANONICAL (see the
 * module comment). Never throws.
 */
export function readGossipMessage(
  serializer: Serializer,
  bytes: Uint8Array,
): Record<string, unknown> | typeof NOT_CANONICAL {
  const len = bytes.length;
  if (len < 3 || bytes[0] !== MAP16) return NOT_CANONICAL;
  const pairs = u16(bytes, 1);
  if (pairs < 2 || !matches(bytes, 3, KEY_TO)) return NOT_CANONICAL;
  // the `to` string
  let p = 6;
  const t = bytes[p] as number;
  if (p < len && (t & FIXSTR_MASK) === FIXSTR) p += 1 + (t & 0x1f);
  else {
    const str = lengthAt(bytes, p, STR_FORMS);
    if (str === undefined) return NOT_CANONICAL;
    p = str.next + str.length;
  }
  const toEnd = p;
  if (!matches(bytes, p, KEY_GB)) return NOT_CANONICAL;
  // the extension header of `gb`
  const ext = lengthAt(bytes, p + KEY_GB.length, EXT_FORMS);
  if (ext === undefined) return NOT_CANONICAL;
  const extLength = ext.length;
  p = ext.next;
  if (
    extLength < 1 ||
    p + 1 + extLength > len ||
    bytes[p] !== EXT_TYPED_ARRAY ||
    bytes[p + 1] !== TYPED_UINT8
  )
    return NOT_CANONICAL;
  p += 2;
  const contentEnd = p + extLength - 1;
  const content = bytes.subarray(p, contentEnd);
  // the other pairs, as a map of their own: {to, ...the pairs after gb}
  const toBytes = toEnd - 3;
  const restLength = len - contentEnd;
  const rest = restBytes.alloc(3 + toBytes + restLength);
  rest[0] = MAP16;
  rest[1] = (pairs - 1) >>> 8;
  rest[2] = (pairs - 1) & 0xff;
  rest.set(bytes.subarray(3, toEnd), 3);
  rest.set(bytes.subarray(contentEnd), 3 + toBytes);
  let body: unknown;
  try {
    body = serializer.fromBinary(rest);
  } catch {
    return NOT_CANONICAL;
  }
  if (typeof body !== "object" || body === null || Array.isArray(body) || "gb" in body)
    return NOT_CANONICAL;
  (body as Record<string, unknown>).gb = content;
  return body as Record<string, unknown>;
}
