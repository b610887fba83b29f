/**
 * Result values for decoders of payloads that come from a peer. A decoder of peer bytes
 * never throws: it returns `{ ok: true, value }` or `{ ok: false, error }`, and callers
 * branch on `error.code` (stable strings), never on `detail` (free text for logs).
 */

/** Stable codes of payload decode failures. */
export const PayloadErrorCode = {
  /** The payload ended before a field was complete. */
  TRUNCATED: "PAYLOAD_TRUNCATED",
  /** Bytes were left over after the last field. */
  TRAILING_BYTES: "PAYLOAD_TRAILING_BYTES",
  /** A field had a value outside its allowed range or was not valid UTF-8. */
  INVALID_FIELD: "PAYLOAD_INVALID_FIELD",
  /** A handshake payload did not start with the magic bytes. */
  BAD_MAGIC: "HANDSHAKE_BAD_MAGIC",
  /** A handshake payload announced a protocol version this node cannot parse. */
  VERSION_UNSUPPORTED: "HANDSHAKE_VERSION_UNSUPPORTED",
} as const;

/** One of the {@link PayloadErrorCode} values. */
export type PayloadErrorCode = (typeof PayloadErrorCode)[keyof typeof PayloadErrorCode];

/** Why a payload could not be decoded. `offset` is the byte offset in the payload. */
export type PayloadDecodeError =
  | {
      readonly code: Exclude<PayloadErrorCode, typeof PayloadErrorCode.VERSION_UNSUPPORTED>;
      readonly detail: string;
      readonly offset: number;
    }
  | {
      readonly code: typeof PayloadErrorCode.VERSION_UNSUPPORTED;
      readonly detail: string;
      readonly offset: number;
      /** The version the peer announced. */
      readonly version: number;
    };

/** Outcome of decoding a payload from a peer. */
export type DecodeResult<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: PayloadDecodeError };

/** Wraps a successfully decoded value. */
export function decoded<T>(value: T): DecodeResult<T> {
  return { ok: true, value };
}

/** Wraps a decode failure. */
export function decodeFailed<T>(error: PayloadDecodeError): DecodeResult<T> {
  return { ok: false, error };
}
