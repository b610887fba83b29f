/**
 * The remoting wire protocol: framing, handshake, message envelopes and serialization.
 * Pure data transformations over Uint8Array; imports only base, never node:*.
 */
export * from "./decode-result.js";
export * from "./errors.js";
export * from "./frame-decoder.js";
export * from "./framing.js";
export {
  decodeHandshakeConfirm,
  decodeHandshakeHello,
  decodeHandshakeReject,
  describePeer,
  encodeHandshakeConfirm,
  encodeHandshakeHello,
  encodeHandshakeReject,
  HANDSHAKE_MAGIC,
  HANDSHAKE_NONCE_BYTES,
  HANDSHAKE_PROOF_BYTES_MAX,
  type HandshakeConfirm,
  type HandshakeHello,
  type HandshakeReject,
  HOST_BYTES_MAX,
  type NodeAddress,
  PROTOCOL_VERSION,
  PROTOCOL_VERSION_MIN,
  RejectReason,
  SYSTEM_NAME_BYTES_MAX,
} from "./handshake.js";
export * from "./handshake-check.js";
export * from "./handshake-proof.js";
export { MESSAGE_DEPTH_MAX } from "./msgpack-prepare.js";
export {
  createMsgpackSerializer,
  MSGPACK_ROOM_BYTES_MAX,
  type MsgpackSerializer,
  SHARDKIT_EXTENSION_TYPE,
} from "./msgpack-serializer.js";
export * from "./serialization.js";
export * from "./serializer-registry.js";
export * from "./sharding.js";
export * from "./singleton.js";
export * from "./system-message.js";
export * from "./user-envelope.js";
export * from "./user-envelope-reader.js";
export * from "./user-payload.js";
