/**
 * Crypto port: the two primitives remoting's handshake needs. runtime/node implements
 * them with node:crypto; the simulator uses the same HMAC (a pure function) and draws
 * nonces from its seeded Random so runs replay.
 */
export interface Crypto {
  /** HMAC-SHA-256 of `data` under `key` (32 bytes). */
  hmacSha256(key: Uint8Array, data: Uint8Array): Uint8Array;
  /** `n` random bytes (cryptographically strong in the real runtime). */
  randomBytes(n: number): Uint8Array;
}
