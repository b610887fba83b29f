/**
 * Proof of a shared cluster secret in the handshake.
 *
 * The proof is HMAC(secret, input) where input is exactly
 *   ASCII "shardkit-handshake-v1" | frameType u8 | version u16 | nonce[16]
 *   | systemName str16 | host str16 | port u16 | uid i64
 * (str16 = u16 length + UTF-8, so no two field lists share a byte string). The REQ
 * carries a fresh nonce; the ACK echoes the REQ's nonce, which makes the ACK proof
 * fresh, and the frame type byte keeps an ACK proof from being replayed as a REQ proof.
 * The secret never crosses the wire. A recorded REQ can be replayed to claim the same
 * identity, so the proof keeps out nodes that do not know the secret (wrong cluster,
 * misconfiguration, scanners); TLS is the answer to an active attacker.
 *
 * protocol/ cannot import node:crypto, so the HMAC function is injected (runtime/node
 * passes one built on createHmac); comparison is constant-time here.
 */
import { assert } from "../base/assert.js";
import { ByteWriter } from "./byte-writer.js";
import type { FrameType } from "./framing.js";
import { HANDSHAKE_NONCE_BYTES, type HandshakeHello, writeIdentity } from "./handshake.js";
import { utf8Encode } from "./utf8.js";

/** Domain-separation prefix of every proof input. */
export const HANDSHAKE_PROOF_CONTEXT = "shardkit-handshake-v1";

/** Which handshake message a proof belongs to. */
export type HandshakeKind = typeof FrameType.HANDSHAKE_REQ | typeof FrameType.HANDSHAKE_ACK;

/** An HMAC (e.g. HMAC-SHA-256) of `data` under `key`, supplied by the runtime. */
export type HmacFn = (key: Uint8Array, data: Uint8Array) => Uint8Array;

/** Tells whether `proof` is a valid MAC of `input` under a configured secret. */
export type ProofVerifier = (input: Uint8Array, proof: Uint8Array) => boolean;

const CONTEXT_BYTES = utf8Encode(HANDSHAKE_PROOF_CONTEXT);

/** The exact bytes that are MACed for `hello` sent as `kind`. `hello.nonce` is required. */
export function handshakeProofInput(kind: HandshakeKind, hello: HandshakeHello): Uint8Array {
  assert(hello.nonce?.length === HANDSHAKE_NONCE_BYTES, "a proof needs a 16-byte nonce");
  const w = new ByteWriter()
    .bytes(CONTEXT_BYTES)
    .u8(kind)
    .u16(hello.protocolVersion)
    .bytes(hello.nonce);
  return writeIdentity(w, hello).finish();
}

/** Returns `hello` with its proof set to HMAC(secret, handshakeProofInput(kind, hello)). */
export function signHandshake(
  hmac: HmacFn,
  secret: Uint8Array,
  kind: HandshakeKind,
  hello: HandshakeHello,
): HandshakeHello {
  return { ...hello, proof: hmac(secret, handshakeProofInput(kind, hello)) };
}

/**
 * A verifier that accepts a proof made with any of `secrets` (several allow rotating the
 * secret without a cluster-wide restart).
 */
export function hmacProofVerifier(hmac: HmacFn, secrets: readonly Uint8Array[]): ProofVerifier {
  assert(secrets.length > 0, "hmacProofVerifier needs at least one secret");
  return (input, proof) => {
    let ok = false;
    for (const secret of secrets) ok = constantTimeEqual(hmac(secret, input), proof) || ok;
    return ok;
  };
}

/** Byte equality whose running time does not depend on where the inputs differ. */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}
