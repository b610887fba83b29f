/**
 * Payloads of the HANDSHAKE_REQ, HANDSHAKE_ACK, HANDSHAKE_CONFIRM and HANDSHAKE_REJECT
 * frames (the exchange itself is handshake-check.ts; docs/security.md explains why).
 *
 * REQ and ACK share one layout, the *hello*: who the sender is (system name, address,
 * uid), the sender's fresh nonce and, on an ACK when a secret is configured, a proof
 * (see handshake-proof.ts). CONFIRM carries the connecting side's proof. REJECT carries
 * a reason and the rejecter's identity.
 *
 * Layouts (big-endian; str16 = u16 byte length + UTF-8):
 *   hello  (v2): magic[4] "SKIT" | version u16 | flags u8 | systemName str16 | host str16
 *                | port u16 | uid i64 | nonce[16] if flags&1 | proofLen u8 + proof if flags&2
 *   confirm(v2): magic[4] "SKIT" | version u16 | flags u8 | proofLen u8 + proof if flags&2
 *   reject     : magic[4] "SKIT" | version u16 | reason u8 | systemName str16 | host str16
 *                | port u16 | uid i64
 *
 * Version 2 (this one) replaced v1's two-message exchange, where only the connecting
 * side sent a nonce and a recorded REQ could be replayed, by a three-message
 * challenge-response (REQ, ACK, CONFIRM) in which both sides contribute a nonce.
 *
 * Invariants: magic + version open every handshake payload in every protocol version,
 * so a node can always tell "not shardkit" from "a shardkit of another version". The
 * REJECT layout is frozen across versions so that a peer of another version can read
 * why it was turned away. Decoders validate every field and never throw.
 *
 * The uid is a signed 64-bit integer carried as a bigint: exact at any value, and a
 * superset of the safe-integer `number` uids of core/membership (`BigInt(uid)` maps one
 * to the other without loss).
 */

import { assert, fail } from "../base/assert.js";
import { copyBytes } from "../base/bytes.js";
import { type ByteReader, decodeWith } from "./byte-reader.js";
import { ByteWriter } from "./byte-writer.js";
import { type DecodeResult, PayloadErrorCode } from "./decode-result.js";
import { utf8ByteLength } from "./utf8.js";

/** The four bytes that open every handshake payload: ASCII "SKIT". */
export const HANDSHAKE_MAGIC: Readonly<Uint8Array> = Uint8Array.of(0x53, 0x4b, 0x49, 0x54);
/** Protocol version this build speaks. */
export const PROTOCOL_VERSION = 2;
/** Oldest protocol version this build can parse. */
export const PROTOCOL_VERSION_MIN = 2;
/** Length of a handshake nonce. */
export const HANDSHAKE_NONCE_BYTES = 16;
/** Longest accepted proof (an HMAC-SHA-512 is 64 bytes). */
export const HANDSHAKE_PROOF_BYTES_MAX = 64;
/** Longest system name, in UTF-8 bytes. */
export const SYSTEM_NAME_BYTES_MAX = 255;
/** Longest host name, in UTF-8 bytes. */
export const HOST_BYTES_MAX = 255;

const FLAG_NONCE = 0b01;
const FLAG_PROOF = 0b10;
const UID_MIN = -(1n << 63n);
const UID_MAX = (1n << 63n) - 1n;

/** Where a node listens. */
export interface NodeAddress {
  readonly host: string;
  readonly port: number;
}

/** Payload of HANDSHAKE_REQ (from the connecting node) and HANDSHAKE_ACK (the answer). */
export interface HandshakeHello {
  readonly protocolVersion: number;
  readonly systemName: string;
  readonly address: NodeAddress;
  /** Incarnation id of the sender, a signed 64-bit integer. */
  readonly uid: bigint;
  /** The sender's fresh random nonce (REQ: the connecting side's, ACK: the accepting side's). Exactly 16 bytes. */
  readonly nonce?: Uint8Array;
  /** ACK only: HMAC over handshakeProofInput(...); 1..64 bytes. */
  readonly proof?: Uint8Array;
}

/** Payload of HANDSHAKE_CONFIRM: the connecting side's proof, once it has the ACK. */
export interface HandshakeConfirm {
  readonly protocolVersion: number;
  /** HMAC over handshakeProofInput(...) when a secret is configured; 1..64 bytes. */
  readonly proof?: Uint8Array;
}

/** Why a handshake was refused. */
export const RejectReason = {
  VERSION_MISMATCH: "version-mismatch",
  SYSTEM_MISMATCH: "system-mismatch",
  BAD_SECRET: "bad-secret",
  QUARANTINED: "quarantined",
  MALFORMED: "malformed",
  /**
   * Without a secret: the claimed address has a live association that was reached at
   * another host than the one this connection comes from.
   */
  ADDRESS_CLAIM: "address-claim",
  /** The handshake did not follow REQ, ACK, CONFIRM (e.g. no nonce). */
  PROTOCOL_ERROR: "protocol-error",
} as const;

/** One of the {@link RejectReason} values. */
export type RejectReason = (typeof RejectReason)[keyof typeof RejectReason];

/** Wire codes of reject reasons; never renumber. */
const REJECT_CODES: Readonly<Record<RejectReason, number>> = {
  [RejectReason.VERSION_MISMATCH]: 1,
  [RejectReason.SYSTEM_MISMATCH]: 2,
  [RejectReason.BAD_SECRET]: 3,
  [RejectReason.QUARANTINED]: 4,
  [RejectReason.MALFORMED]: 5,
  [RejectReason.ADDRESS_CLAIM]: 6,
  [RejectReason.PROTOCOL_ERROR]: 7,
};

const REASON_BY_CODE: ReadonlyMap<number, RejectReason> = new Map(
  Object.entries(REJECT_CODES).map(([reason, code]) => [code, reason as RejectReason]),
);

/** Payload of HANDSHAKE_REJECT: the reason and who rejected. */
export interface HandshakeReject {
  readonly protocolVersion: number;
  readonly reason: RejectReason;
  readonly systemName: string;
  readonly address: NodeAddress;
  readonly uid: bigint;
}

/** `system@host:port#uid`, for logs. */
export function describePeer(p: { systemName: string; address: NodeAddress; uid: bigint }): string {
  return `${p.systemName}@${p.address.host}:${p.address.port}#${p.uid}`;
}

function assertIdentity(p: HandshakeHello | HandshakeReject): void {
  const nameBytes = utf8ByteLength(p.systemName);
  assert(nameBytes >= 1 && nameBytes <= SYSTEM_NAME_BYTES_MAX, "systemName must be 1..255 bytes");
  const hostBytes = utf8ByteLength(p.address.host);
  assert(hostBytes >= 1 && hostBytes <= HOST_BYTES_MAX, "host must be 1..255 bytes");
  if (!isPort(p.address.port)) fail(`port out of range: ${p.address.port}`);
  if (!(p.uid >= UID_MIN && p.uid <= UID_MAX)) fail(`uid out of i64 range: ${p.uid}`);
}

function isPort(port: number): boolean {
  return Number.isInteger(port) && port >= 1 && port <= 0xffff;
}

/** @internal Writes systemName, host, port, uid (shared by hello, reject, proof input). */
export function writeIdentity(
  w: ByteWriter,
  p: { systemName: string; address: NodeAddress; uid: bigint },
): ByteWriter {
  return w.str16(p.systemName).str16(p.address.host).u16(p.address.port).i64(p.uid);
}

/** Encodes a HANDSHAKE_REQ / HANDSHAKE_ACK payload. Invalid fields are programmer errors. */
export function encodeHandshakeHello(hello: HandshakeHello): Uint8Array {
  assertIdentity(hello);
  assert(hello.protocolVersion === PROTOCOL_VERSION, "hello must carry PROTOCOL_VERSION");
  const { nonce, proof } = hello;
  assert(nonce === undefined || nonce.length === HANDSHAKE_NONCE_BYTES, "nonce must be 16 bytes");
  assert(
    proof === undefined || (proof.length >= 1 && proof.length <= HANDSHAKE_PROOF_BYTES_MAX),
    "proof must be 1..64 bytes",
  );
  const flags = (nonce ? FLAG_NONCE : 0) | (proof ? FLAG_PROOF : 0);
  const w = new ByteWriter().bytes(HANDSHAKE_MAGIC).u16(hello.protocolVersion).u8(flags);
  writeIdentity(w, hello);
  if (nonce) w.bytes(nonce);
  if (proof) w.u8(proof.length).bytes(proof);
  return w.finish();
}

/** Encodes a HANDSHAKE_CONFIRM payload. */
export function encodeHandshakeConfirm(confirm: HandshakeConfirm): Uint8Array {
  assert(confirm.protocolVersion === PROTOCOL_VERSION, "confirm must carry PROTOCOL_VERSION");
  const { proof } = confirm;
  assert(
    proof === undefined || (proof.length >= 1 && proof.length <= HANDSHAKE_PROOF_BYTES_MAX),
    "proof must be 1..64 bytes",
  );
  const w = new ByteWriter()
    .bytes(HANDSHAKE_MAGIC)
    .u16(confirm.protocolVersion)
    .u8(proof ? FLAG_PROOF : 0);
  if (proof) w.u8(proof.length).bytes(proof);
  return w.finish();
}

/** Encodes a HANDSHAKE_REJECT payload. */
export function encodeHandshakeReject(reject: HandshakeReject): Uint8Array {
  assertIdentity(reject);
  const w = new ByteWriter()
    .bytes(HANDSHAKE_MAGIC)
    .u16(reject.protocolVersion)
    .u8(REJECT_CODES[reject.reason]);
  return writeIdentity(w, reject).finish();
}

function readMagicAndVersion(r: ByteReader): number {
  const magic = r.bytes(HANDSHAKE_MAGIC.length, "magic");
  if (!magic.every((b, i) => b === HANDSHAKE_MAGIC[i]))
    r.fail(PayloadErrorCode.BAD_MAGIC, "payload does not start with SKIT", 0);
  return r.u16("version");
}

function readIdentity(r: ByteReader): Pick<HandshakeHello, "systemName" | "address" | "uid"> {
  const systemName = readName(r, "systemName", SYSTEM_NAME_BYTES_MAX);
  const host = readName(r, "host", HOST_BYTES_MAX);
  const portAt = r.offset;
  const port = r.u16("port");
  if (!isPort(port))
    r.fail(PayloadErrorCode.INVALID_FIELD, "port 0 is not a valid address", portAt);
  return { systemName, address: { host, port }, uid: r.i64("uid") };
}

function readName(r: ByteReader, field: string, maxBytes: number): string {
  const at = r.offset;
  const text = r.str16(field);
  const bytes = r.offset - at - 2;
  if (bytes < 1 || bytes > maxBytes)
    r.fail(PayloadErrorCode.INVALID_FIELD, `${field} must be 1..${maxBytes} bytes`, at);
  return text;
}

function readSupportedVersion(r: ByteReader): number {
  const protocolVersion = readMagicAndVersion(r);
  if (protocolVersion < PROTOCOL_VERSION_MIN || protocolVersion > PROTOCOL_VERSION)
    r.failWith({
      code: PayloadErrorCode.VERSION_UNSUPPORTED,
      detail: `protocol version ${protocolVersion} not supported (${PROTOCOL_VERSION_MIN}..${PROTOCOL_VERSION})`,
      offset: HANDSHAKE_MAGIC.length,
      version: protocolVersion,
    });
  return protocolVersion;
}

function readFlags(r: ByteReader, allowed: number): number {
  const flagsAt = r.offset;
  const flags = r.u8("flags");
  if ((flags & ~allowed) !== 0)
    r.fail(PayloadErrorCode.INVALID_FIELD, `unknown flags ${flags}`, flagsAt);
  return flags;
}

function readConfirm(r: ByteReader): HandshakeConfirm {
  const protocolVersion = readSupportedVersion(r);
  const flags = readFlags(r, FLAG_PROOF);
  const proof = flags & FLAG_PROOF ? readProof(r) : undefined;
  r.end();
  return { protocolVersion, proof };
}

function readHello(r: ByteReader): HandshakeHello {
  const protocolVersion = readSupportedVersion(r);
  const flags = readFlags(r, FLAG_NONCE | FLAG_PROOF);
  const identity = readIdentity(r);
  const nonce = flags & FLAG_NONCE ? copyBytes(r.bytes(HANDSHAKE_NONCE_BYTES, "nonce")) : undefined;
  const proof = flags & FLAG_PROOF ? readProof(r) : undefined;
  r.end();
  return { protocolVersion, ...identity, nonce, proof };
}

function readProof(r: ByteReader): Uint8Array {
  const at = r.offset;
  const length = r.u8("proof length");
  if (length < 1 || length > HANDSHAKE_PROOF_BYTES_MAX)
    r.fail(
      PayloadErrorCode.INVALID_FIELD,
      `proof must be 1..${HANDSHAKE_PROOF_BYTES_MAX} bytes`,
      at,
    );
  return copyBytes(r.bytes(length, "proof"));
}

function readReject(r: ByteReader): HandshakeReject {
  const protocolVersion = readMagicAndVersion(r);
  const at = r.offset;
  const reason = REASON_BY_CODE.get(r.u8("reason"));
  if (reason === undefined) r.fail(PayloadErrorCode.INVALID_FIELD, "unknown reject reason", at);
  const identity = readIdentity(r);
  r.end();
  return { protocolVersion, reason, ...identity };
}

/**
 * Decodes a HANDSHAKE_REQ / HANDSHAKE_ACK payload. Never throws. A payload of an
 * unsupported version fails with code HANDSHAKE_VERSION_UNSUPPORTED and the version.
 * Nonce and proof are copies (they outlive the frame).
 */
export function decodeHandshakeHello(payload: Uint8Array): DecodeResult<HandshakeHello> {
  return decodeWith(payload, readHello);
}

/** Decodes a HANDSHAKE_CONFIRM payload. Never throws. The proof is a copy. */
export function decodeHandshakeConfirm(payload: Uint8Array): DecodeResult<HandshakeConfirm> {
  return decodeWith(payload, readConfirm);
}

/** Decodes a HANDSHAKE_REJECT payload (any protocol version). Never throws. */
export function decodeHandshakeReject(payload: Uint8Array): DecodeResult<HandshakeReject> {
  return decodeWith(payload, readReject);
}
