/**
 * The handshake (protocol version 2) as pure functions of both sides, so every rule is
 * unit testable without sockets. The drivers (cluster/remoting) decode frames, draw the
 * nonces from the Crypto/Random port, call these, and send what they return.
 *
 * The exchange, a challenge-response in which both sides contribute a fresh nonce:
 *
 *   connecting                                  accepting
 *   REQ     (identity, nonce Nc)          ->    version, system name, nonce present
 *                                        <-    ACK (identity, nonce Na, proof_a)
 *   version, system, proof_a, tombstone
 *   CONFIRM (proof_c)                     ->    proof_c, tombstone, address claim
 *   (user/system/control frames)          ->    accepted: frames are delivered
 *
 * proof_a and proof_c (handshake-proof.ts) are present when a secret is configured and
 * cover both nonces, both identities, the protocol version and the TLS binding; they use
 * different labels. Nothing from the connecting side is delivered before its CONFIRM
 * verified, and every CONFIRM answers a nonce this acceptor drew for this connection, so
 * a recorded exchange replayed on a new connection fails.
 *
 * Admission (after the proof): a removed or quarantined incarnation (address + uid) is
 * refused while its tombstone lives; without a secret, a claim to an address that has a
 * live association is refused unless it comes from the host that association reached
 * (the claim cannot be authenticated, so it must at least not move the address to
 * another machine). Log messages name the peer and the mismatch, never proof bytes.
 */

import { assert } from "../base/assert.js";
import { type PayloadDecodeError, PayloadErrorCode } from "./decode-result.js";
import { FrameType } from "./framing.js";
import {
  describePeer,
  HANDSHAKE_NONCE_BYTES,
  type HandshakeConfirm,
  type HandshakeHello,
  type NodeAddress,
  PROTOCOL_VERSION,
  RejectReason,
} from "./handshake.js";
import {
  type HandshakeIdentity,
  type HandshakeTranscript,
  type HmacFn,
  proveHandshake,
  verifyHandshakeProof,
} from "./handshake-proof.js";

/** What the local node knows and requires when it judges a handshake. */
export interface HandshakePolicy {
  readonly systemName: string;
  /** Defaults to PROTOCOL_VERSION. */
  readonly protocolVersion?: number;
  /**
   * Accepted cluster secrets; the first is the one this node proves with. Empty: no
   * secret (claims are then only checked against live associations).
   */
  readonly secrets: readonly Uint8Array[];
  /** Required when `secrets` is not empty. */
  readonly hmac?: HmacFn;
  /** True while `address`#`uid` is tombstoned (removed or quarantined). */
  readonly isTombstoned?: (address: NodeAddress, uid: bigint) => boolean;
  /**
   * The host (IP) at which a live association with `address` was reached, if there is
   * one. Only consulted without a secret.
   */
  readonly liveAssociationHost?: (address: NodeAddress) => string | undefined;
}

/** A refusal: the reason sent to the peer and a line for our log. */
export interface HandshakeRefusal {
  readonly type: "reject";
  readonly reason: RejectReason;
  readonly logMessage: string;
}

/** The accepting side's state between its ACK and the CONFIRM. */
export interface AcceptorChallenge {
  readonly req: HandshakeHello;
  readonly transcript: HandshakeTranscript;
  /** Socket address (IP) the connection comes from. */
  readonly sourceHost: string;
}

/** The connecting side's state between its REQ and the ACK. */
export interface InitiatorState {
  readonly self: HandshakeIdentity;
  readonly nonce: Uint8Array;
}

export type AcceptorRequestStep =
  | { readonly type: "challenge"; readonly ack: HandshakeHello; readonly state: AcceptorChallenge }
  | HandshakeRefusal;

export type AcceptorConfirmStep =
  | { readonly type: "accept"; readonly peer: HandshakeIdentity }
  | HandshakeRefusal;

export type InitiatorAckStep =
  | {
      readonly type: "accept";
      readonly peer: HandshakeIdentity;
      readonly confirm: HandshakeConfirm;
    }
  | HandshakeRefusal;

function reject(reason: RejectReason, logMessage: string): HandshakeRefusal {
  return { type: "reject", reason, logMessage };
}

function identityOf(h: HandshakeIdentity): HandshakeIdentity {
  return { systemName: h.systemName, address: h.address, uid: h.uid };
}

/** Version and system name: shared by both sides. */
function checkCommon(
  policy: HandshakePolicy,
  remote: HandshakeHello,
  what: string,
): HandshakeRefusal | undefined {
  const version = policy.protocolVersion ?? PROTOCOL_VERSION;
  const peer = describePeer(remote);
  if (remote.protocolVersion !== version)
    return reject(
      RejectReason.VERSION_MISMATCH,
      `${what} from ${peer}: protocol version ${remote.protocolVersion}, local ${version}`,
    );
  if (remote.systemName !== policy.systemName)
    return reject(
      RejectReason.SYSTEM_MISMATCH,
      `${what} from ${peer}: system "${remote.systemName}", local "${policy.systemName}"`,
    );
  if (remote.nonce?.length !== HANDSHAKE_NONCE_BYTES)
    return reject(RejectReason.PROTOCOL_ERROR, `${what} from ${peer}: no nonce`);
  return undefined;
}

function checkTombstone(
  policy: HandshakePolicy,
  remote: HandshakeIdentity,
  what: string,
): HandshakeRefusal | undefined {
  if (policy.isTombstoned?.(remote.address, remote.uid))
    return reject(
      RejectReason.QUARANTINED,
      `${what} from ${describePeer(remote)}: that incarnation was removed or quarantined`,
    );
  return undefined;
}

function proofOrUndefined(
  policy: HandshakePolicy,
  kind: typeof FrameType.HANDSHAKE_ACK | typeof FrameType.HANDSHAKE_CONFIRM,
  t: HandshakeTranscript,
): Uint8Array | undefined {
  const secret = policy.secrets[0];
  if (secret === undefined) return undefined;
  assert(policy.hmac !== undefined, "a handshake secret needs an hmac");
  return proveHandshake(policy.hmac, secret, kind, t);
}

function proofValid(
  policy: HandshakePolicy,
  kind: typeof FrameType.HANDSHAKE_ACK | typeof FrameType.HANDSHAKE_CONFIRM,
  t: HandshakeTranscript,
  proof: Uint8Array | undefined,
): boolean {
  if (policy.secrets.length === 0) return true;
  if (proof === undefined || policy.hmac === undefined) return false;
  return verifyHandshakeProof(policy.hmac, policy.secrets, kind, t, proof);
}

/** IPv4-mapped IPv6 and IPv4 are the same host; case does not matter. */
export function normalizeHost(host: string): string {
  const h = host.toLowerCase();
  return h.startsWith("::ffff:") && h.includes(".") ? h.slice(7) : h;
}

// ------------------------------------------------------------------ connecting side

/** The REQ the connecting side sends, and the state to judge the ACK with. */
export function startHandshake(
  self: HandshakeIdentity,
  nonce: Uint8Array,
  protocolVersion: number = PROTOCOL_VERSION,
): { readonly req: HandshakeHello; readonly state: InitiatorState } {
  const id = identityOf(self);
  return { req: { protocolVersion, ...id, nonce }, state: { self: id, nonce } };
}

/**
 * Judges the ACK on the connecting side: version, system, the acceptor's proof (with a
 * secret), the acceptor's tombstone. On accept, returns the CONFIRM to send.
 */
export function onHandshakeAck(
  policy: HandshakePolicy,
  state: InitiatorState,
  ack: HandshakeHello,
  binding: Uint8Array,
): InitiatorAckStep {
  const what = "handshake ack";
  const common = checkCommon(policy, ack, what);
  if (common !== undefined) return common;
  const transcript: HandshakeTranscript = {
    protocolVersion: ack.protocolVersion,
    connecting: state.self,
    connectingNonce: state.nonce,
    accepting: identityOf(ack),
    acceptingNonce: ack.nonce as Uint8Array,
    binding,
  };
  if (!proofValid(policy, FrameType.HANDSHAKE_ACK, transcript, ack.proof))
    return reject(
      RejectReason.BAD_SECRET,
      `${what} from ${describePeer(ack)}: ${ack.proof ? "proof does not match the cluster secret" : "no proof, but a cluster secret is required"}`,
    );
  const tombstone = checkTombstone(policy, ack, what);
  if (tombstone !== undefined) return tombstone;
  const proof = proofOrUndefined(policy, FrameType.HANDSHAKE_CONFIRM, transcript);
  return {
    type: "accept",
    peer: identityOf(ack),
    confirm: { protocolVersion: ack.protocolVersion, ...(proof ? { proof } : {}) },
  };
}

// ------------------------------------------------------------------ accepting side

/**
 * Judges a REQ on the accepting side: version, system name, a nonce. On success returns
 * the ACK (with this side's fresh `nonce` and, with a secret, its proof) and the state
 * that the CONFIRM is judged with. Nothing about admission is revealed yet.
 */
export function onHandshakeRequest(
  policy: HandshakePolicy,
  self: HandshakeIdentity,
  req: HandshakeHello,
  input: { readonly nonce: Uint8Array; readonly binding: Uint8Array; readonly sourceHost: string },
): AcceptorRequestStep {
  const common = checkCommon(policy, req, "handshake request");
  if (common !== undefined) return common;
  const transcript: HandshakeTranscript = {
    protocolVersion: req.protocolVersion,
    connecting: identityOf(req),
    connectingNonce: req.nonce as Uint8Array,
    accepting: identityOf(self),
    acceptingNonce: input.nonce,
    binding: input.binding,
  };
  const proof = proofOrUndefined(policy, FrameType.HANDSHAKE_ACK, transcript);
  return {
    type: "challenge",
    ack: {
      protocolVersion: req.protocolVersion,
      ...identityOf(self),
      nonce: input.nonce,
      ...(proof ? { proof } : {}),
    },
    state: { req, transcript, sourceHost: input.sourceHost },
  };
}

/**
 * Judges the CONFIRM: the connecting side's proof (with a secret), then admission
 * (tombstone; without a secret, the address claim). Accept means frames from this
 * connection may now be delivered.
 */
export function onHandshakeConfirm(
  policy: HandshakePolicy,
  state: AcceptorChallenge,
  confirm: HandshakeConfirm,
): AcceptorConfirmStep {
  const what = "handshake confirm";
  const peer = state.transcript.connecting;
  const version = policy.protocolVersion ?? PROTOCOL_VERSION;
  if (confirm.protocolVersion !== version)
    return reject(
      RejectReason.VERSION_MISMATCH,
      `${what} from ${describePeer(peer)}: protocol version ${confirm.protocolVersion}, local ${version}`,
    );
  if (!proofValid(policy, FrameType.HANDSHAKE_CONFIRM, state.transcript, confirm.proof))
    return reject(
      RejectReason.BAD_SECRET,
      `${what} from ${describePeer(peer)}: ${confirm.proof ? "proof does not match the cluster secret" : "no proof, but a cluster secret is required"}`,
    );
  const tombstone = checkTombstone(policy, peer, what);
  if (tombstone !== undefined) return tombstone;
  if (policy.secrets.length === 0) {
    const live = policy.liveAssociationHost?.(peer.address);
    if (live !== undefined && normalizeHost(live) !== normalizeHost(state.sourceHost))
      return reject(
        RejectReason.ADDRESS_CLAIM,
        `${what} from ${describePeer(peer)}: claims an address whose live association is at host ${live}, but comes from ${state.sourceHost} (configure a secret or TLS to authenticate claims)`,
      );
  }
  return { type: "accept", peer };
}

/** The refusal to send when a handshake payload could not even be decoded. */
export function rejectForDecodeError(error: PayloadDecodeError, from: string): HandshakeRefusal {
  const message = `handshake from ${from} could not be decoded: ${error.detail}`;
  return error.code === PayloadErrorCode.VERSION_UNSUPPORTED
    ? reject(RejectReason.VERSION_MISMATCH, message)
    : reject(RejectReason.MALFORMED, message);
}
