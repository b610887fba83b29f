/**
 * Proof of a shared cluster secret in the handshake (protocol version 2).
 *
 * Each side proves with HMAC(secret, input) where input is exactly
 *   ASCII "shardkit-handshake-v2" | kind u8 | version u16
 *   | connecting nonce[16] | accepting nonce[16]
 *   | connecting systemName str16 | host str16 | port u16 | uid i64
 *   | accepting  systemName str16 | host str16 | port u16 | uid i64
 *   | binding length u16 | binding
 * (str16 = u16 length + UTF-8, so no two field lists share a byte string). `kind` is the
 * frame type that carries the proof: HANDSHAKE_ACK for the accepting side's proof,
 * HANDSHAKE_CONFIRM for the connecting side's, so one side's proof is never valid as the
 * other's (no reflection). Both nonces are fresh per connection and each side draws its
 * own, so a recorded exchange proves nothing on a new connection (no replay). `binding`
 * is the TLS keying-material exporter output of the connection (empty on plain TCP): a
 * proof made on one TLS session is worthless on another, so a relay between two TLS
 * sessions cannot pass the handshake through.
 *
 * The secret never crosses the wire. Several secrets may be accepted (rotation); a node
 * proves with the first. protocol/ cannot import node:crypto, so the HMAC function is
 * injected (runtime/node passes one built on createHmac); comparison is constant-time.
 */
import { assert } from "../base/assert.js";
import { ByteWriter } from "./byte-writer.js";
import type { FrameType } from "./framing.js";
import { HANDSHAKE_NONCE_BYTES, type NodeAddress, writeIdentity } from "./handshake.js";
import { utf8Encode } from "./utf8.js";

/** Domain-separation prefix of every proof input. */
export const HANDSHAKE_PROOF_CONTEXT = "shardkit-handshake-v2";
/** Label of the TLS keying-material exporter whose output binds the proofs to a session. */
export const HANDSHAKE_TLS_EXPORTER_LABEL = "EXPORTER-shardkit-handshake";
/** Bytes taken from the TLS exporter. */
export const HANDSHAKE_TLS_BINDING_BYTES = 32;

/** Which handshake message a proof belongs to. */
export type HandshakeProofKind =
  | typeof FrameType.HANDSHAKE_ACK
  | typeof FrameType.HANDSHAKE_CONFIRM;

/** An HMAC (e.g. HMAC-SHA-256) of `data` under `key`, supplied by the runtime. */
export type HmacFn = (key: Uint8Array, data: Uint8Array) => Uint8Array;

/** Who a handshake side is. */
export interface HandshakeIdentity {
  readonly systemName: string;
  readonly address: NodeAddress;
  readonly uid: bigint;
}

/** Everything a proof covers. */
export interface HandshakeTranscript {
  readonly protocolVersion: number;
  readonly connecting: HandshakeIdentity;
  readonly connectingNonce: Uint8Array;
  readonly accepting: HandshakeIdentity;
  readonly acceptingNonce: Uint8Array;
  /** TLS exporter output of the connection; empty on plain TCP. */
  readonly binding: Uint8Array;
}

const CONTEXT_BYTES = utf8Encode(HANDSHAKE_PROOF_CONTEXT);

/** The exact bytes that are MACed for a proof of `kind` over `t`. */
export function handshakeProofInput(kind: HandshakeProofKind, t: HandshakeTranscript): Uint8Array {
  assert(
    t.connectingNonce.length === HANDSHAKE_NONCE_BYTES &&
      t.acceptingNonce.length === HANDSHAKE_NONCE_BYTES,
    "a proof needs two 16-byte nonces",
  );
  assert(t.binding.length <= 0xffff, "binding longer than 65535 bytes");
  const w = new ByteWriter()
    .bytes(CONTEXT_BYTES)
    .u8(kind)
    .u16(t.protocolVersion)
    .bytes(t.connectingNonce)
    .bytes(t.acceptingNonce);
  writeIdentity(w, t.connecting);
  writeIdentity(w, t.accepting);
  return w.u16(t.binding.length).bytes(t.binding).finish();
}

/** HMAC(secret, handshakeProofInput(kind, t)). */
export function proveHandshake(
  hmac: HmacFn,
  secret: Uint8Array,
  kind: HandshakeProofKind,
  t: HandshakeTranscript,
): Uint8Array {
  return hmac(secret, handshakeProofInput(kind, t));
}

/**
 * True when `proof` is the proof of `kind` over `t` under any of `secrets` (several allow
 * rotating the secret without a cluster-wide restart). Every secret is tried, so the time
 * taken does not say which one matched.
 */
export function verifyHandshakeProof(
  hmac: HmacFn,
  secrets: readonly Uint8Array[],
  kind: HandshakeProofKind,
  t: HandshakeTranscript,
  proof: Uint8Array,
): boolean {
  const input = handshakeProofInput(kind, t);
  let ok = false;
  for (const secret of secrets) ok = constantTimeEqual(hmac(secret, input), proof) || ok;
  return ok;
}

/** Byte equality whose running time does not depend on where the inputs differ. */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}
