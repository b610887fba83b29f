/**
 * Maps serializer ids to serializers and messages to the serializer that encodes them.
 *
 * Invariants: ids are unique; user serializers have ids >= 100, shardkit's 0..99; the
 * default msgpackr serializer (id 1) is always present and handles every value no
 * binding matches. Bindings are tried in registration order, so register specific
 * bindings before general ones. All failures are typed: ConfigError at registration,
 * SerializationError / UnknownSerializerError when (de)serializing.
 */
import { ConfigError } from "../base/errors.js";
import { SerializationError, UnknownSerializerError } from "./errors.js";
import { createMsgpackSerializer, type MsgpackSerializer } from "./msgpack-serializer.js";
import {
  INTERNAL_SERIALIZER_ID_MIN,
  MSGPACK_SERIALIZER_ID,
  type RefCodec,
  SERIALIZER_ID_MAX,
  type SerializedMessage,
  type Serializer,
  type SerializerBinding,
  USER_SERIALIZER_ID_MIN,
} from "./serialization.js";

/** Options of a {@link SerializerRegistry}. */
export interface SerializerRegistryOptions {
  /** Lets actor refs travel inside msgpackr messages (provided by the actor system). */
  readonly refCodec?: RefCodec;
}

/**
 * A message serialized behind `room` free bytes: the message is `bytes[room..]`, and
 * `bytes[0, room)` is for the caller to fill in (see `serializeWithRoom`).
 */
export interface SerializedWithRoom {
  readonly serializerId: number;
  readonly bytes: Uint8Array;
  /** The free bytes at the start of `bytes`: the requested room, or 0. */
  readonly room: number;
}

interface Bound {
  readonly serializer: Serializer;
  readonly matches: (value: unknown) => boolean;
}

/** Registry of serializers for one actor system. */
export class SerializerRegistry {
  /** The msgpackr serializer used when no binding matches. */
  readonly defaultSerializer: Serializer;
  private readonly msgpack: MsgpackSerializer;
  private readonly byId = new Map<number, Serializer>();
  private readonly bindings: Bound[] = [];

  constructor(options: SerializerRegistryOptions = {}) {
    this.msgpack = createMsgpackSerializer(options.refCodec);
    this.defaultSerializer = this.msgpack;
    this.add(this.defaultSerializer, undefined, INTERNAL_SERIALIZER_ID_MIN);
  }

  /**
   * Registers a user serializer (id >= 100). With a binding, values it matches are
   * serialized with it; without one, it is only used to decode its id.
   * @throws ConfigError on an id out of range or already taken.
   */
  register<T>(serializer: Serializer<T>, binding?: SerializerBinding): this {
    this.add(serializer, binding, USER_SERIALIZER_ID_MIN);
    return this;
  }

  /** @internal Registers one of shardkit's own serializers (id 0..99). */
  registerInternal<T>(serializer: Serializer<T>, binding?: SerializerBinding): this {
    if (serializer.id >= USER_SERIALIZER_ID_MIN)
      throw new ConfigError(
        `serializers.${serializer.name}.id`,
        serializer.id,
        `an internal id below ${USER_SERIALIZER_ID_MIN}`,
      );
    this.add(serializer, binding, INTERNAL_SERIALIZER_ID_MIN);
    return this;
  }

  /** The serializer with this id, if any. */
  serializerById(id: number): Serializer | undefined {
    return this.byId.get(id);
  }

  /** The serializer that `serialize(value)` would use. */
  serializerFor(value: unknown): Serializer {
    for (const b of this.bindings) if (b.matches(value)) return b.serializer;
    return this.defaultSerializer;
  }

  /**
   * Encodes a message with the serializer chosen for it.
   * @throws SerializationError when the value cannot be encoded.
   */
  serialize(value: unknown): SerializedMessage {
    const serializer = this.serializerFor(value);
    let bytes: unknown;
    try {
      bytes = serializer.toBinary(value);
    } catch (e) {
      throw asSerializationError(e, serializer, "toBinary");
    }
    if (!(bytes instanceof Uint8Array))
      throw new SerializationError(`${serializer.name}.toBinary did not return a Uint8Array`, {
        serializerId: serializer.id,
      });
    return { serializerId: serializer.id, bytes };
  }

  /**
   * Like `serialize`, but tries to leave `room` free bytes in front of the message, so
   * that the caller can write a header there without copying the message (the default
   * serializer can; user serializers get room 0, and the caller copies).
   * @throws SerializationError when the value cannot be encoded.
   */
  serializeWithRoom(value: unknown, room: number): SerializedWithRoom {
    const serializer = this.serializerFor(value);
    if (serializer !== this.msgpack) return { ...this.serialize(value), room: 0 };
    let bytes: Uint8Array | undefined;
    try {
      bytes = this.msgpack.toBinaryWithRoom(value, room);
    } catch (e) {
      throw asSerializationError(e, serializer, "toBinary");
    }
    if (bytes === undefined) return { ...this.serialize(value), room: 0 };
    return { serializerId: MSGPACK_SERIALIZER_ID, bytes, room };
  }

  /**
   * `deserialize(serializerId, source.subarray(start, end))`, without the view when the
   * serializer is the default one.
   * @throws UnknownSerializerError when no serializer has that id.
   * @throws SerializationError when the bytes cannot be decoded.
   */
  deserializeRange(serializerId: number, source: Uint8Array, start: number, end: number): unknown {
    if (serializerId !== MSGPACK_SERIALIZER_ID)
      return this.deserialize(serializerId, source.subarray(start, end));
    try {
      return this.msgpack.fromBinaryRange(source, start, end);
    } catch (e) {
      throw asSerializationError(e, this.msgpack, "fromBinary");
    }
  }

  /**
   * Decodes bytes made by the serializer with `serializerId`.
   * @throws UnknownSerializerError when no serializer has that id.
   * @throws SerializationError when the bytes cannot be decoded.
   */
  deserialize(serializerId: number, bytes: Uint8Array): unknown {
    const serializer = this.byId.get(serializerId);
    if (serializer === undefined) throw new UnknownSerializerError(serializerId);
    try {
      return serializer.fromBinary(bytes);
    } catch (e) {
      throw asSerializationError(e, serializer, "fromBinary");
    }
  }

  private add(serializer: Serializer, binding: SerializerBinding | undefined, idMin: number): void {
    const { id, name } = serializer;
    const key = `serializers.${name}.id`;
    if (!Number.isInteger(id) || id < idMin || id > SERIALIZER_ID_MAX)
      throw new ConfigError(key, id, `an integer between ${idMin} and ${SERIALIZER_ID_MAX}`);
    const taken = this.byId.get(id);
    if (taken !== undefined)
      throw new ConfigError(key, id, `an id not already used (taken by "${taken.name}")`);
    this.byId.set(id, serializer);
    if (binding !== undefined) this.bindings.push({ serializer, matches: matcher(binding) });
  }
}

function matcher(binding: SerializerBinding): (value: unknown) => boolean {
  if ("match" in binding) return binding.match;
  const cls = binding.class;
  return (value) => value instanceof cls;
}

function asSerializationError(e: unknown, serializer: Serializer, op: string): SerializationError {
  if (e instanceof SerializationError) return e;
  const detail = e instanceof Error ? e.message : String(e);
  return new SerializationError(`${serializer.name}.${op} failed: ${detail}`, {
    serializerId: serializer.id,
    cause: e,
  });
}
