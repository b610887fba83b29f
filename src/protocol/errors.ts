/**
 * Typed errors of the wire protocol layer. These are thrown on the *sending* side
 * (encode, serialize) where the caller can react synchronously; everything that parses
 * bytes from a peer returns an error value instead (see decode-result.ts and
 * frame-decoder.ts), because a bad peer is an expected condition, not an exception.
 */
import { ShardkitError } from "../base/errors.js";

/** A frame body (type byte + payload) would exceed `frameSizeMaxBytes`. */
export class FrameTooLargeError extends ShardkitError {
  readonly sizeBytes: number;
  readonly frameSizeMaxBytes: number;
  constructor(sizeBytes: number, frameSizeMaxBytes: number) {
    super(
      "FRAME_TOO_LARGE",
      `frame body of ${sizeBytes} bytes exceeds frameSizeMaxBytes=${frameSizeMaxBytes}`,
      { sizeBytes, frameSizeMaxBytes },
    );
    this.sizeBytes = sizeBytes;
    this.frameSizeMaxBytes = frameSizeMaxBytes;
  }
}

/**
 * A value could not be turned into bytes, or bytes could not be turned back into a
 * value. `reason` is a short stable phrase; `path` locates the offending part of the
 * message (`$` is the root, e.g. `$.items[2]`) when known.
 */
export class SerializationError extends ShardkitError {
  readonly reason: string;
  readonly path: string | undefined;
  readonly serializerId: number | undefined;
  override readonly cause: unknown;
  constructor(
    reason: string,
    details: { path?: string; serializerId?: number; cause?: unknown } = {},
  ) {
    const where = details.path === undefined ? "" : ` at ${details.path}`;
    const by = details.serializerId === undefined ? "" : ` (serializer ${details.serializerId})`;
    super("SERIALIZATION_FAILED", `serialization failed${where}${by}: ${reason}`, {
      reason,
      path: details.path,
      serializerId: details.serializerId,
    });
    this.reason = reason;
    this.path = details.path;
    this.serializerId = details.serializerId;
    this.cause = details.cause;
  }
}

/** Bytes arrived tagged with a serializer id that no serializer is registered for. */
export class UnknownSerializerError extends ShardkitError {
  readonly serializerId: number;
  constructor(serializerId: number) {
    super("UNKNOWN_SERIALIZER", `no serializer registered with id ${serializerId}`, {
      serializerId,
    });
    this.serializerId = serializerId;
  }
}
