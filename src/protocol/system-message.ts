/**
 * Payloads of the reliable system lane.
 *
 *   SYSTEM     : seq u64 | message (the rest; normally a user envelope, user-envelope.ts)
 *   SYSTEM_ACK : seq u64 — cumulative: every SYSTEM frame with a sequence number <= seq
 *                has been received. 0 acknowledges nothing.
 *
 * Sequence numbers start at 1 per association and are u64, carried as bigint so they
 * never lose precision. Decoders never throw; the SYSTEM message is a view of the frame
 * payload (same lifetime; see frame-decoder.ts).
 */
import { fail } from "../base/assert.js";
import { decodeWith } from "./byte-reader.js";
import type { DecodeResult } from "./decode-result.js";

const SEQ_BYTES = 8;
const U64_LIMIT = 1n << 64n;

/** A SYSTEM frame payload. */
export interface SystemMessage {
  readonly seq: bigint;
  readonly message: Uint8Array;
}

function assertSeq(seq: bigint): void {
  if (!(seq >= 0n && seq < U64_LIMIT)) fail(`sequence number out of u64 range: ${seq}`);
}

/** Encodes a SYSTEM payload. */
export function encodeSystemMessage(seq: bigint, message: Uint8Array): Uint8Array {
  assertSeq(seq);
  const out = new Uint8Array(SEQ_BYTES + message.length);
  new DataView(out.buffer).setBigUint64(0, seq);
  out.set(message, SEQ_BYTES);
  return out;
}

/** Decodes a SYSTEM payload. Never throws. */
export function decodeSystemMessage(payload: Uint8Array): DecodeResult<SystemMessage> {
  return decodeWith(payload, (r) => ({ seq: r.u64("seq"), message: r.rest() }));
}

/** Encodes a SYSTEM_ACK payload. */
export function encodeSystemAck(cumulativeSeq: bigint): Uint8Array {
  assertSeq(cumulativeSeq);
  const out = new Uint8Array(SEQ_BYTES);
  new DataView(out.buffer).setBigUint64(0, cumulativeSeq);
  return out;
}

/** Decodes a SYSTEM_ACK payload to its cumulative sequence number. Never throws. */
export function decodeSystemAck(payload: Uint8Array): DecodeResult<bigint> {
  return decodeWith(payload, (r) => {
    const seq = r.u64("seq");
    r.end();
    return seq;
  });
}
