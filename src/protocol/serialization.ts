/**
 * Contracts of message serialization: a `Serializer` turns values into bytes and back
 * and is known by a stable numeric id that travels with the bytes (user-envelope.ts),
 * so the receiver picks the same serializer. A `RefCodec`, provided by the actor
 * system, lets actor refs travel inside messages as (address, path) and be resolved to
 * live refs on arrival.
 *
 * Id ranges: 0..99 belong to shardkit (1 is the default msgpackr serializer),
 * 100..2^32-1 to users. Ids are part of the wire format: never reuse one for a
 * different encoding.
 */

/** Id of the default msgpackr serializer. */
export const MSGPACK_SERIALIZER_ID = 1;
/** Lowest id of the shardkit range. */
export const INTERNAL_SERIALIZER_ID_MIN = 0;
/** Lowest user id; 0..99 are reserved for shardkit. */
export const USER_SERIALIZER_ID_MIN = 100;
/** Highest id (ids travel as u32). */
export const SERIALIZER_ID_MAX = 0xffff_ffff;

/** Turns values of type `T` into bytes and back. Must be deterministic and pure. */
export interface Serializer<T = unknown> {
  /** Stable wire id; see the id ranges in this module's comment. */
  readonly id: number;
  /** Human-readable name for logs and errors. */
  readonly name: string;
  /** Encodes `value`; may throw (the registry wraps it in a SerializationError). */
  toBinary(value: T): Uint8Array;
  /**
   * Decodes bytes produced by `toBinary` (possibly by another node). `bytes` is a view
   * into a network buffer: copy what the result keeps. May throw; the registry wraps it.
   */
  fromBinary(bytes: Uint8Array): T;
}

/** How an actor ref appears on the wire. */
export interface WireRefData {
  /** The node that hosts the actor, e.g. `shop@10.0.0.1:2552`. */
  readonly address: string;
  /** The actor's path on that node, e.g. `/user/cart-42`. */
  readonly path: string;
}

/**
 * Bridge between live actor refs and their wire form; implemented by the actor
 * system. `decode` runs while msgpackr is decoding: it must be synchronous and must
 * not call back into the serializer.
 */
export interface RefCodec {
  isRef(value: unknown): boolean;
  encode(ref: unknown): WireRefData;
  decode(data: WireRefData): unknown;
  /**
   * Optional shortcut for the reply target of an ask of this node: its id (> 0), after
   * doing what `encode` would do for it, or -1 for any other ref. Its wire form is then
   * `{ address: localAddress, path: "/temp/$ask<id>#<id>" }`, written without building
   * the strings (msgpack-fast-pack.ts).
   */
  askId?(ref: unknown): number;
  /** This node's address as `encode` writes it; required with `askId`. */
  readonly localAddress?: string;
}

/** A serialized message: which serializer made the bytes, and the bytes. */
export interface SerializedMessage {
  readonly serializerId: number;
  readonly bytes: Uint8Array;
}

/** A constructor, for binding a serializer to a class. */
export type Constructor<T = unknown> = abstract new (...args: never[]) => T;

/**
 * Which values a registered serializer handles: a predicate, or a class (matched
 * with `instanceof`). Bindings are tried in registration order; the first match wins.
 */
export type SerializerBinding =
  | { readonly match: (value: unknown) => boolean }
  | { readonly class: Constructor };
