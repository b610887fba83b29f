/**
 * Serializes an actor message straight into a USER payload (user-envelope.ts) for the
 * send hot path.
 *
 * The default serializer leaves room for the envelope header in front of the message it
 * writes, and the header (flags, serializer id, and the recipient field the caller
 * encoded once per actor ref) is written into that room: one buffer per message, no
 * intermediate exact-size buffer, no copy. Messages from user serializers, and headers
 * longer than the room msgpackr can reserve, take the general path (one copy).
 */
import type { SerializerRegistry } from "./serializer-registry.js";
import { userEnvelopeHeaderBytes, writeUserEnvelopeHeader } from "./user-envelope.js";

/**
 * The USER payload carrying `message` to the recipient whose field is `recipientField`
 * (from `encodeRecipientField`), without sender.
 * @throws SerializationError when the message cannot be serialized.
 */
export function encodeUserPayload(
  registry: SerializerRegistry,
  recipientField: Uint8Array,
  message: unknown,
): Uint8Array {
  const headerBytes = userEnvelopeHeaderBytes(recipientField);
  const s = registry.serializeWithRoom(message, headerBytes);
  if (s.room === headerBytes) {
    writeUserEnvelopeHeader(s.bytes, 0, s.serializerId, recipientField);
    return s.bytes;
  }
  // No room (serializeWithRoom gives all or nothing): header and message are copied.
  const out = new Uint8Array(headerBytes + s.bytes.length);
  writeUserEnvelopeHeader(out, 0, s.serializerId, recipientField);
  out.set(s.bytes, headerBytes);
  return out;
}
