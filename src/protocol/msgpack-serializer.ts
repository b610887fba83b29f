/**
 * The default serializer (id 1): MessagePack via msgpackr, for messages that are plain
 * data. Round-trips exactly: string, number (except -0, which arrives as 0), boolean,
 * null, undefined, bigint (any size), plain objects (key order kept), arrays, Map (any
 * key type), Set, Date, Uint8Array and the other typed arrays (a Node Buffer arrives as
 * a plain Uint8Array). Anything else is rejected at send time (see msgpack-prepare.ts).
 *
 * msgpackr options and why:
 * - useRecords: false — objects are written as plain MessagePack maps. msgpackr records
 *   would need shared structures to pay off; inline in every message they cost 1.6x on
 *   pack and 3x on unpack for small messages.
 * - mapsAsObjects: true — MessagePack maps decode to plain objects; a JS Map travels
 *   under shardkit's extension instead, so Map and object stay distinct.
 * - moreTypes: true — tagged Set, typed arrays and big bigints.
 * - int64AsType: "bigint", largeBigIntToFloat/ToString: false — a bigint stays a bigint.
 * - structuredClone: false — a peer cannot send shared/cyclic references.
 * - copyBuffers: true — decoded binaries are copies, not views of the frame buffer.
 *
 * shardkit's extension is msgpackr type 0x53 ("S"), registered once, process-wide
 * (msgpackr's extension table is global; other msgpackr users must not take 0x53). It
 * carries a tagged array: `[0, address, path]` for an actor ref, `[1, k1, v1, ...]` for
 * a Map. Decoding resolves refs through the RefCodec of the serializer doing the
 * decoding; it is held in a module variable for the duration of the synchronous
 * `unpack` call.
 *
 * Strictness: every message is checked by validateMsgpack (msgpack-validate.ts) before
 * msgpackr sees it, so reserved bytes, extensions shardkit never writes and lengths
 * beyond the message fail with SerializationError instead of decoding to something.
 *
 * Hot path: plain data and actor refs (most messages, asks included) are written by
 * FastPacker (msgpack-fast-pack.ts) in one walk, with exactly the bytes of the general
 * path; everything else goes through prepareForPack and msgpackr. On receipt,
 * FastUnpacker (msgpack-fast-unpack.ts) checks and decodes the same subset (plus Set and
 * Map) in one walk, with exactly msgpackr's result; anything else, and every error, takes
 * validateMsgpack + msgpackr. For remoting, `toBinaryWithRoom` leaves room for the
 * envelope header in front of the message and `fromBinaryRange` decodes a message where
 * it lies in a network chunk, so neither side copies or re-wraps the bytes.
 */
import { addExtension, type Options, Packr, RESERVE_START_SPACE, Unpackr } from "msgpackr";
import { SerializationError } from "./errors.js";
import { FastPacker } from "./msgpack-fast-pack.js";
import { FAST_UNPACK_GAVE_UP, FastUnpacker } from "./msgpack-fast-unpack.js";
import {
  prepareForPack,
  SHARDKIT_EXTENSION_TYPE,
  TAG_MAP,
  TAG_REF,
  Tagged,
} from "./msgpack-prepare.js";
import { validateMsgpack } from "./msgpack-validate.js";
import { MSGPACK_SERIALIZER_ID, type RefCodec, type Serializer } from "./serialization.js";

export { SHARDKIT_EXTENSION_TYPE };

/** The msgpackr options of the default serializer (see the module comment). */
export const MSGPACKR_OPTIONS: Readonly<Options> = {
  useRecords: false,
  mapsAsObjects: true,
  moreTypes: true,
  int64AsType: "bigint",
  largeBigIntToFloat: false,
  largeBigIntToString: false,
  useBigIntExtension: true,
  structuredClone: false,
  copyBuffers: true,
};

let extensionInstalled = false;
/** RefCodec of the `fromBinary` call in progress (undefined outside of one). */
let decodingRefCodec: RefCodec | undefined;

function installExtension(): void {
  if (extensionInstalled) return;
  addExtension({
    Class: Tagged,
    type: SHARDKIT_EXTENSION_TYPE,
    write: (value: Tagged) => value.items,
    read: readTagged,
  });
  extensionInstalled = true;
}

function malformed(reason: string): SerializationError {
  return new SerializationError(reason, { serializerId: MSGPACK_SERIALIZER_ID });
}

function readTagged(data: unknown): unknown {
  if (!Array.isArray(data)) throw malformed("malformed shardkit extension value");
  switch (data[0]) {
    case TAG_REF:
      return readRef(data);
    case TAG_MAP:
      return readMap(data);
    default:
      throw malformed(`unknown shardkit extension tag ${String(data[0])}`);
  }
}

function readRef(data: readonly unknown[]): unknown {
  const [, address, path] = data;
  if (data.length !== 3 || typeof address !== "string" || typeof path !== "string")
    throw malformed("malformed actor ref");
  if (decodingRefCodec === undefined)
    throw malformed("the message contains an actor ref but no RefCodec is set");
  return decodingRefCodec.decode({ address, path });
}

function readMap(data: readonly unknown[]): Map<unknown, unknown> {
  if (data.length % 2 !== 1) throw malformed("malformed Map: odd number of keys and values");
  const map = new Map<unknown, unknown>();
  for (let i = 1; i < data.length; i += 2) map.set(data[i], data[i + 1]);
  return map;
}

/** Most bytes {@link MsgpackSerializer.toBinaryWithRoom} can leave free (msgpackr's limit). */
export const MSGPACK_ROOM_BYTES_MAX = 0xff;

/** The default serializer, with two allocation-saving forms for the remoting hot path. */
export interface MsgpackSerializer extends Serializer<unknown> {
  /**
   * Like `toBinary`, but the result starts with `room` (0..255) bytes of unspecified
   * content for the caller to fill in (an envelope header), followed by the message:
   * header and message then share one buffer and nothing is copied. Returns undefined
   * when it cannot (room too large, or the msgpackr in use does not honour the request);
   * the caller then uses `toBinary`.
   */
  toBinaryWithRoom(value: unknown, room: number): Uint8Array | undefined;
  /**
   * `fromBinary(source.subarray(start, end))` without creating the view: msgpackr then
   * reuses one DataView per source buffer instead of creating one per message.
   */
  fromBinaryRange(source: Uint8Array, start: number, end: number): unknown;
}

let roomSupported: boolean | undefined;

/**
 * RESERVE_START_SPACE is exported but not documented by msgpackr: check once that it
 * does what we rely on (room at the start, then exactly the normal encoding), so that a
 * change in msgpackr degrades to a copy instead of corrupting messages.
 */
function checkRoomSupported(packr: Packr): boolean {
  const value = { probe: [1, "two", 3n] };
  const room = 7;
  const plain = packr.pack(value);
  const roomy = packr.pack(value, RESERVE_START_SPACE | room);
  if (roomy.length !== plain.length + room) return false;
  for (let i = 0; i < plain.length; i++) if (roomy[room + i] !== plain[i]) return false;
  return true;
}

/**
 * Creates the default msgpackr serializer. `refCodec` encodes and resolves actor refs
 * inside messages; without it, a ref-shaped value is just an unsupported class instance.
 */
export function createMsgpackSerializer(refCodec?: RefCodec): MsgpackSerializer {
  return buildMsgpackSerializer(refCodec, true);
}

/**
 * The default serializer without FastUnpacker: every message is decoded by
 * validateMsgpack + msgpackr. For tests and benchmarks that compare the two decoders;
 * not exported from the protocol index.
 */
export function createGeneralMsgpackSerializer(refCodec?: RefCodec): MsgpackSerializer {
  return buildMsgpackSerializer(refCodec, false);
}

function buildMsgpackSerializer(
  refCodec: RefCodec | undefined,
  fastUnpack: boolean,
): MsgpackSerializer {
  installExtension();
  const packr = new Packr(MSGPACKR_OPTIONS);
  const unpackr = new Unpackr(MSGPACKR_OPTIONS);
  roomSupported ??= checkRoomSupported(packr);
  const fast = new FastPacker(refCodec);
  // Reused by fromBinaryRange: msgpackr reads start/end (and `lazy`) at the beginning
  // of `unpack` only, so a nested unpack overwriting it does no harm.
  const range = { start: 0, end: 0 };
  const fastUnpacker = fastUnpack ? new FastUnpacker(readTagged) : undefined;
  const unpackWith = (source: Uint8Array, options: typeof range | undefined): unknown => {
    const outer = decodingRefCodec;
    decodingRefCodec = refCodec;
    try {
      const start = options === undefined ? 0 : options.start;
      const end = options === undefined ? source.length : options.end;
      if (fastUnpacker !== undefined && start < end) {
        const fast = fastUnpacker.unpack(source, start, end);
        if (fast !== FAST_UNPACK_GAVE_UP) return fast;
      }
      validateMsgpack(source, start, end);
      return unpackr.unpack(source, options);
    } finally {
      decodingRefCodec = outer;
    }
  };
  return {
    id: MSGPACK_SERIALIZER_ID,
    name: "msgpackr",
    toBinary(value: unknown): Uint8Array {
      return (
        fast.pack(value, 0) ?? packr.pack(prepareForPack(value, refCodec, MSGPACK_SERIALIZER_ID))
      );
    },
    toBinaryWithRoom(value: unknown, room: number): Uint8Array | undefined {
      if (room > MSGPACK_ROOM_BYTES_MAX || room < 0) return undefined;
      const bytes = fast.pack(value, room);
      if (bytes !== undefined) return bytes;
      if (!roomSupported) return undefined;
      const prepared = prepareForPack(value, refCodec, MSGPACK_SERIALIZER_ID);
      return packr.pack(prepared, RESERVE_START_SPACE | room);
    },
    fromBinary(bytes: Uint8Array): unknown {
      return unpackWith(bytes, undefined);
    },
    fromBinaryRange(source: Uint8Array, start: number, end: number): unknown {
      // msgpackr reads `end: 0` as "to the end of the source": an empty range takes the
      // general path, so that it fails exactly as an empty message always did.
      if (start >= end) return unpackWith(source.subarray(start, end), undefined);
      range.start = start;
      range.end = end;
      return unpackWith(source, range);
    },
  };
}
