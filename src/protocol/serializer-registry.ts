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
import { createMsgpackSerializer } from "./msgpack-serializer.js";
import {
  INTERNAL_SERIALIZER_ID_MIN,
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

interface Bound {
  readonly serializer: Serializer;
  readonly matches: (value: unknown) => boolean;
}

/** Registry of serializers for one actor system. */
export class SerializerRegistry {
  /** The msgpackr serializer used when no binding matches. */
  readonly defaultSerializer: Serializer;
  private readonly byId = new Map<number, Serializer>();
  private readonly bindings: Bound[] = [];

  constructor(options: SerializerRegistryOptions = {}) {
    this.defaultSerializer = createMsgpackSerializer(options.refCodec);
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
