/**
 * Payload of a USER frame: one actor message with its addressing.
 *
 * Layout (big-endian; str16 = u16 byte length + UTF-8):
 *   flags u8 (bit 0: sender present; other bits 0) | serializerId u32
 *   | recipient str16 | sender str16 if bit 0 | message bytes (the rest of the payload)
 *
 * The message needs no length: the frame delimits it. Decoding never throws and returns
 * the message as a view of the frame payload (same lifetime; see frame-decoder.ts).
 */
import { assert } from "../base/assert.js";
import { decodeWith } from "./byte-reader.js";
import type { DecodeResult } from "./decode-result.js";
import { PayloadErrorCode } from "./decode-result.js";
import { SerializationError } from "./errors.js";
import { SERIALIZER_ID_MAX } from "./serialization.js";
import { utf8ByteLength, utf8Write } from "./utf8.js";

const FLAG_SENDER = 0b1;
const STR16_BYTES_MAX = 0xffff;
const HEADER_BYTES = 1 + 4;

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

/**
 * Encodes a USER payload into one exactly-sized buffer.
 * @throws SerializationError when a path is longer than 65535 UTF-8 bytes.
 */
export function encodeUserEnvelope(envelope: UserEnvelope): Uint8Array {
  const { recipient, sender, serializerId, message } = envelope;
  assert(recipient.length > 0, "recipient path must not be empty");
  assert(
    Number.isInteger(serializerId) && serializerId >= 0 && serializerId <= SERIALIZER_ID_MAX,
    `serializerId out of range: ${serializerId}`,
  );
  const recipientBytes = pathLength("recipient", recipient);
  const senderBytes = sender === undefined ? -1 : pathLength("sender", sender);
  const out = new Uint8Array(
    HEADER_BYTES + 2 + recipientBytes + (senderBytes >= 0 ? 2 + senderBytes : 0) + message.length,
  );
  out[0] = senderBytes >= 0 ? FLAG_SENDER : 0;
  out[1] = serializerId >>> 24;
  out[2] = (serializerId >>> 16) & 0xff;
  out[3] = (serializerId >>> 8) & 0xff;
  out[4] = serializerId & 0xff;
  let pos = writeStr16(out, HEADER_BYTES, recipient, recipientBytes);
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
  return decodeWith(payload, (r) => {
    const flags = r.u8("flags");
    if ((flags & ~FLAG_SENDER) !== 0)
      r.fail(PayloadErrorCode.INVALID_FIELD, `unknown flags ${flags}`, 0);
    const serializerId = r.u32("serializerId");
    const at = r.offset;
    const recipient = r.str16("recipient");
    if (recipient.length === 0) r.fail(PayloadErrorCode.INVALID_FIELD, "empty recipient", at);
    const sender = flags & FLAG_SENDER ? r.str16("sender") : undefined;
    return { recipient, sender, serializerId, message: r.rest() };
  });
}
