/**
 * Payload of a USER frame: one actor message with its addressing.
 *
 * Layout (big-endian; str16 = u16 byte length + UTF-8):
 *   flags u8 (bit 0: sender present; other bits 0) | serializerId u32
 *   | recipient str16 | sender str16 if bit 0 | message bytes (the rest of the payload)
 *
 * The message needs no length: the frame delimits it. Decoding never throws and returns
 * the message as a view of the frame payload (same lifetime; see frame-decoder.ts).
 *
 * Hot path (why the header helpers exist): a sender encodes the recipient field once
 * per actor ref ({@link encodeRecipientField}) and writes the fixed header in front of
 * the serialized bytes, into room the serializer left for it (user-payload.ts); the
 * receiver decodes with a per-connection {@link UserEnvelopeReader}
 * (user-envelope-reader.ts). `encodeUserEnvelope` / `decodeUserEnvelope` are the
 * general forms of the same layout.
 */
import { assert, fail } from "../base/assert.js";
import type { DecodeResult } from "./decode-result.js";
import { decoded, decodeFailed } from "./decode-result.js";
import { SerializationError } from "./errors.js";
import { SERIALIZER_ID_MAX } from "./serialization.js";
import { UserEnvelopeReader } from "./user-envelope-reader.js";
import { utf8ByteLength, utf8Write } from "./utf8.js";

/** Flags bit 0: a sender path follows the recipient. */
export const USER_ENVELOPE_FLAG_SENDER = 0b1;
/** Bytes before the recipient field: flags u8 + serializerId u32. */
export const USER_ENVELOPE_FIXED_BYTES = 1 + 4;
const STR16_BYTES_MAX = 0xffff;

/** An actor message as carried in a USER frame (and inside SYSTEM frames). */
export interface UserEnvelope {
  /** Path of the recipient actor on the receiving node. Non-empty. */
  readonly recipient: string;
  /** Full address + path of the sender, when replies are possible. */
  readonly sender?: string;
  /** Id of the serializer that produced `message`. */
  readonly serializerId: number;
  /** The serialized message. */
  readonly message: Uint8Array;
}

function pathLength(field: string, text: string): number {
  const length = utf8ByteLength(text);
  if (length > STR16_BYTES_MAX)
    throw new SerializationError(`${field} path is longer than ${STR16_BYTES_MAX} UTF-8 bytes`);
  return length;
}

function assertSerializerId(serializerId: number): void {
  if (!(Number.isInteger(serializerId) && serializerId >= 0 && serializerId <= SERIALIZER_ID_MAX))
    fail(`serializerId out of range: ${serializerId}`);
}

/**
 * The recipient field (str16) of a USER envelope, to be computed once per recipient and
 * passed to {@link writeUserEnvelopeHeader}.
 * @throws SerializationError when the path is longer than 65535 UTF-8 bytes.
 */
export function encodeRecipientField(recipient: string): Uint8Array {
  assert(recipient.length > 0, "recipient path must not be empty");
  const length = pathLength("recipient", recipient);
  const out = new Uint8Array(2 + length);
  writeStr16(out, 0, recipient, length);
  return out;
}

/** Bytes of the header (everything before the message) of an envelope without sender. */
export function userEnvelopeHeaderBytes(recipientField: Uint8Array): number {
  return USER_ENVELOPE_FIXED_BYTES + recipientField.length;
}

/**
 * Writes the header of an envelope without sender (flags, serializerId, recipient field)
 * at `offset`; returns the offset where the message starts.
 */
export function writeUserEnvelopeHeader(
  target: Uint8Array,
  offset: number,
  serializerId: number,
  recipientField: Uint8Array,
): number {
  assertSerializerId(serializerId);
  target[offset] = 0;
  target[offset + 1] = serializerId >>> 24;
  target[offset + 2] = (serializerId >>> 16) & 0xff;
  target[offset + 3] = (serializerId >>> 8) & 0xff;
  target[offset + 4] = serializerId & 0xff;
  const at = offset + USER_ENVELOPE_FIXED_BYTES;
  const n = recipientField.length;
  // A loop beats TypedArray#set on the ~20 bytes of an actor path.
  for (let i = 0; i < n; i++) target[at + i] = recipientField[i] as number;
  return at + n;
}

/**
 * Encodes a USER payload into one exactly-sized buffer.
 * @throws SerializationError when a path is longer than 65535 UTF-8 bytes.
 */
export function encodeUserEnvelope(envelope: UserEnvelope): Uint8Array {
  const { recipient, sender, serializerId, message } = envelope;
  assert(recipient.length > 0, "recipient path must not be empty");
  assertSerializerId(serializerId);
  const recipientBytes = pathLength("recipient", recipient);
  const senderBytes = sender === undefined ? -1 : pathLength("sender", sender);
  const out = new Uint8Array(
    USER_ENVELOPE_FIXED_BYTES +
      2 +
      recipientBytes +
      (senderBytes >= 0 ? 2 + senderBytes : 0) +
      message.length,
  );
  out[0] = senderBytes >= 0 ? USER_ENVELOPE_FLAG_SENDER : 0;
  out[1] = serializerId >>> 24;
  out[2] = (serializerId >>> 16) & 0xff;
  out[3] = (serializerId >>> 8) & 0xff;
  out[4] = serializerId & 0xff;
  let pos = writeStr16(out, USER_ENVELOPE_FIXED_BYTES, recipient, recipientBytes);
  if (sender !== undefined) pos = writeStr16(out, pos, sender, senderBytes);
  out.set(message, pos);
  return out;
}

function writeStr16(out: Uint8Array, pos: number, text: string, byteLength: number): number {
  out[pos] = byteLength >>> 8;
  out[pos + 1] = byteLength & 0xff;
  utf8Write(text, out, pos + 2, byteLength);
  return pos + 2 + byteLength;
}

/** Decodes a USER payload. Never throws. */
export function decodeUserEnvelope(payload: Uint8Array): DecodeResult<UserEnvelope> {
  const r = new UserEnvelopeReader();
  const error = r.read(payload, 0, payload.length);
  if (error !== undefined) return decodeFailed(error);
  return decoded({
    recipient: r.recipient,
    sender: r.sender,
    serializerId: r.serializerId,
    message: payload.subarray(r.messageStart, r.messageEnd),
  });
}
