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
 */
import { addExtension, type Options, Packr, Unpackr } from "msgpackr";
import { SerializationError } from "./errors.js";
import { prepareForPack, TAG_MAP, TAG_REF, Tagged } from "./msgpack-prepare.js";
import { MSGPACK_SERIALIZER_ID, type RefCodec, type Serializer } from "./serialization.js";

/** msgpackr extension type of shardkit's tagged values. Reserved process-wide. */
export const SHARDKIT_EXTENSION_TYPE = 0x53;

const MSGPACKR_OPTIONS: Options = {
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

/**
 * Creates the default msgpackr serializer. `refCodec` encodes and resolves actor refs
 * inside messages; without it, a ref-shaped value is just an unsupported class instance.
 */
export function createMsgpackSerializer(refCodec?: RefCodec): Serializer<unknown> {
  installExtension();
  const packr = new Packr(MSGPACKR_OPTIONS);
  const unpackr = new Unpackr(MSGPACKR_OPTIONS);
  return {
    id: MSGPACK_SERIALIZER_ID,
    name: "msgpackr",
    toBinary(value: unknown): Uint8Array {
      return packr.pack(prepareForPack(value, refCodec, MSGPACK_SERIALIZER_ID));
    },
    fromBinary(bytes: Uint8Array): unknown {
      const outer = decodingRefCodec;
      decodingRefCodec = refCodec;
      try {
        return unpackr.unpack(bytes);
      } finally {
        decodingRefCodec = outer;
      }
    },
  };
}
