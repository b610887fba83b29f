/**
 * The accept/reject decision of a handshake as a pure function, so every rule is unit
 * testable without sockets. The association layer decodes the frame, calls these, and
 * sends an ACK or a REJECT (never both) based on the returned decision.
 *
 * Order of checks on a REQ: version, system name, proof, quarantine. The proof comes
 * before quarantine so that an unauthenticated peer learns nothing about our state.
 * Log messages name the peer and the mismatch but never include proof bytes.
 */

import { type PayloadDecodeError, PayloadErrorCode } from "./decode-result.js";
import { FrameType } from "./framing.js";
import {
  describePeer,
  type HandshakeHello,
  type NodeAddress,
  PROTOCOL_VERSION,
  RejectReason,
} from "./handshake.js";
import { constantTimeEqual, handshakeProofInput, type ProofVerifier } from "./handshake-proof.js";

/** What the local node knows when it judges a handshake. */
export interface HandshakeLocal {
  readonly systemName: string;
  /** Defaults to PROTOCOL_VERSION. */
  readonly protocolVersion?: number;
  /** True when this incarnation of the peer must never be associated with again. */
  readonly isQuarantined?: (address: NodeAddress, uid: bigint) => boolean;
}

/** Outcome of a handshake check. */
export type HandshakeDecision =
  | { readonly type: "accept" }
  | { readonly type: "reject"; readonly reason: RejectReason; readonly logMessage: string };

const ACCEPT: HandshakeDecision = Object.freeze({ type: "accept" });

function reject(reason: RejectReason, logMessage: string): HandshakeDecision {
  return { type: "reject", reason, logMessage };
}

/** Rules shared by both sides: version and system name. */
function checkCommon(
  local: HandshakeLocal,
  remote: HandshakeHello,
  what: string,
): HandshakeDecision {
  const version = local.protocolVersion ?? PROTOCOL_VERSION;
  const peer = describePeer(remote);
  if (remote.protocolVersion !== version)
    return reject(
      RejectReason.VERSION_MISMATCH,
      `${what} from ${peer}: protocol version ${remote.protocolVersion}, local ${version}`,
    );
  if (remote.systemName !== local.systemName)
    return reject(
      RejectReason.SYSTEM_MISMATCH,
      `${what} from ${peer}: system "${remote.systemName}", local "${local.systemName}"`,
    );
  return ACCEPT;
}

function checkQuarantine(local: HandshakeLocal, remote: HandshakeHello, what: string) {
  if (local.isQuarantined?.(remote.address, remote.uid))
    return reject(
      RejectReason.QUARANTINED,
      `${what} from ${describePeer(remote)}: that incarnation is quarantined`,
    );
  return ACCEPT;
}

/**
 * Judges a HANDSHAKE_REQ. `verifyProof` is given when a cluster secret is configured:
 * then the REQ must carry a nonce and a valid proof. Without it, any proof is ignored.
 */
export function checkHandshake(
  local: HandshakeLocal,
  req: HandshakeHello,
  verifyProof: ProofVerifier | undefined,
): HandshakeDecision {
  const what = "handshake request";
  const common = checkCommon(local, req, what);
  if (common.type === "reject") return common;
  if (verifyProof && !hasValidProof(FrameType.HANDSHAKE_REQ, req, verifyProof))
    return reject(
      RejectReason.BAD_SECRET,
      `${what} from ${describePeer(req)}: ${req.proof ? "proof does not match the cluster secret" : "no proof, but a cluster secret is required"}`,
    );
  return checkQuarantine(local, req, what);
}

/**
 * Judges a HANDSHAKE_ACK on the connecting side. With a secret, the ACK must echo
 * `sentNonce` (the nonce of our REQ) and prove it with the secret.
 */
export function checkHandshakeAck(
  local: HandshakeLocal,
  ack: HandshakeHello,
  sentNonce: Uint8Array | undefined,
  verifyProof: ProofVerifier | undefined,
): HandshakeDecision {
  const what = "handshake ack";
  const common = checkCommon(local, ack, what);
  if (common.type === "reject") return common;
  if (verifyProof) {
    const fresh =
      sentNonce !== undefined && ack.nonce !== undefined && constantTimeEqual(ack.nonce, sentNonce);
    if (!fresh || !hasValidProof(FrameType.HANDSHAKE_ACK, ack, verifyProof))
      return reject(
        RejectReason.BAD_SECRET,
        `${what} from ${describePeer(ack)}: ${fresh ? "proof does not match the cluster secret" : "nonce is not the one we sent"}`,
      );
  }
  return checkQuarantine(local, ack, what);
}

function hasValidProof(
  kind: typeof FrameType.HANDSHAKE_REQ | typeof FrameType.HANDSHAKE_ACK,
  hello: HandshakeHello,
  verifyProof: ProofVerifier,
): boolean {
  if (hello.nonce === undefined || hello.proof === undefined) return false;
  return verifyProof(handshakeProofInput(kind, hello), hello.proof);
}

/** The rejection to send when a REQ payload could not even be decoded. */
export function rejectForDecodeError(error: PayloadDecodeError, from: string): HandshakeDecision {
  const message = `handshake request from ${from} could not be decoded: ${error.detail}`;
  return error.code === PayloadErrorCode.VERSION_UNSUPPORTED
    ? reject(RejectReason.VERSION_MISMATCH, message)
    : reject(RejectReason.MALFORMED, message);
}
