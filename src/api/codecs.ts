/**
 * Ready-made codecs for event-sourced entities: `msgpackCodec<T>()` stores events and
 * snapshots of plain data (objects, arrays, strings, numbers, booleans, null, bigint,
 * Uint8Array, Date, Map, Set) with the default msgpack serializer (serializer id 1).
 * Values it cannot encode throw at `encode`; bytes written by another serializer throw a
 * typed CodecMismatchError at `decode`, so recovery fails visibly instead of guessing.
 */
import type { EventCodec } from "../actor/event-sourced/event-sourced-behavior.js";
import { ShardkitError } from "../base/errors.js";
import { createMsgpackSerializer } from "../protocol/msgpack-serializer.js";

/** Stored bytes were written by a serializer this codec does not read. */
export class CodecMismatchError extends ShardkitError {
  constructor(expected: number, got: number) {
    super("CODEC_MISMATCH", `stored value has serializer id ${got}; this codec reads ${expected}`, {
      expected,
      got,
    });
  }
}

let shared: ReturnType<typeof createMsgpackSerializer> | undefined;

/** A msgpack codec for events or snapshot states of plain data. */
export function msgpackCodec<T>(): EventCodec<T> {
  shared ??= createMsgpackSerializer();
  const s = shared;
  return {
    encode: (value) => ({ serializerId: s.id, bytes: s.toBinary(value) }),
    decode: (serializerId, bytes) => {
      if (serializerId !== s.id) throw new CodecMismatchError(s.id, serializerId);
      return s.fromBinary(bytes) as T;
    },
  };
}
