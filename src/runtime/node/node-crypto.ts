/**
 * The real Crypto port: HMAC-SHA-256 and random bytes from node:crypto.
 */
import { createHmac, randomBytes } from "node:crypto";
import type { Crypto } from "../../ports/crypto.js";

export function hmacSha256(key: Uint8Array, data: Uint8Array): Uint8Array {
  return new Uint8Array(createHmac("sha256", key).update(data).digest());
}

export const nodeCrypto: Crypto = {
  hmacSha256,
  randomBytes: (n) => new Uint8Array(randomBytes(n)),
};
