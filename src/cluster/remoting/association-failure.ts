/**
 * Why an outbound association to a peer failed, as a stable cause an operator can act on.
 * Remoting reports every failed attempt (and every established association) to its
 * association listeners; the cluster's join diagnostics name the cause per seed node
 * (docs/operations.md, "Join diagnostics"). Classification is by error code and
 * handshake reject reason, never by message text.
 */
import { ShardkitError } from "../../base/errors.js";
import type { RejectReason } from "../../protocol/handshake.js";

export type AssociationFailureCause =
  /** Nothing listens at host:port (ECONNREFUSED). */
  | "connection-refused"
  /** The host name does not resolve (ENOTFOUND, EAI_AGAIN). */
  | "dns-failure"
  /** TCP connect did not complete in time. */
  | "connect-timeout"
  /** TLS handshake or certificate problem. */
  | "tls"
  /** The peer runs another actor system (systemName differs). */
  | "wrong-system-name"
  /** The cluster secret differs (or only one side has one). */
  | "wrong-secret"
  /** The peer refused the handshake for another reason (quarantined, version, malformed). */
  | "handshake-refused"
  /** The peer accepted TCP but never answered the handshake. */
  | "handshake-timeout"
  | "other";

export interface AssociationFailure {
  readonly cause: AssociationFailureCause;
  /** Human-readable detail (error message, reject reason); no secrets. */
  readonly detail: string;
}

/** What remoting reports to association listeners. */
export type AssociationEvent =
  | { readonly type: "failed"; readonly hostPort: string; readonly failure: AssociationFailure }
  | { readonly type: "established"; readonly hostPort: string }
  /**
   * The incarnation `host:port#uid` refused a handshake with this node because it
   * quarantined this node's incarnation (on either side's connection). The cluster
   * reacts (docs/cluster.md, "Quarantined by a member").
   */
  | {
      readonly type: "quarantined-by";
      readonly hostPort: string;
      readonly host: string;
      readonly port: number;
      readonly uid: bigint;
    };

export type AssociationListener = (event: AssociationEvent) => void;

const DNS_CODES = new Set(["ENOTFOUND", "EAI_AGAIN", "EAI_NONAME", "EAI_NODATA", "EAI_FAIL"]);

/** The cause of a failed connect (a TransportError from the transport, or anything else). */
export function connectFailureOf(error: unknown): AssociationFailure {
  const detail = error instanceof Error ? error.message : String(error);
  if (error instanceof ShardkitError) {
    const code = error.fields.errorCode;
    if (typeof code === "string" && DNS_CODES.has(code)) return { cause: "dns-failure", detail };
    switch (error.fields.reason) {
      case "connect-refused":
        return { cause: "connection-refused", detail };
      case "connect-timeout":
        return { cause: "connect-timeout", detail };
      case "tls":
        return { cause: "tls", detail };
    }
  }
  return { cause: "other", detail };
}

/** The cause of a handshake rejected (by the peer, or by us on its ACK) for `reason`. */
export function handshakeFailureOf(reason: RejectReason, detail: string): AssociationFailure {
  switch (reason) {
    case "system-mismatch":
      return { cause: "wrong-system-name", detail };
    case "bad-secret":
      return { cause: "wrong-secret", detail };
    default:
      return { cause: "handshake-refused", detail };
  }
}

/** One line per cause, naming what to check. */
export function describeAssociationFailure(f: AssociationFailure): string {
  switch (f.cause) {
    case "connection-refused":
      return `connection refused: nothing listens there; is the seed node running, and is the port its remoting port? (${f.detail})`;
    case "dns-failure":
      return `DNS failure: the host name does not resolve (${f.detail})`;
    case "connect-timeout":
      return `connect timed out: host unreachable or a firewall drops the connection (${f.detail})`;
    case "tls":
      return `TLS failure: check certificates and that both sides use TLS (${f.detail})`;
    case "wrong-system-name":
      return `wrong system name: the seed node runs another actor system; every member needs the same systemName (${f.detail})`;
    case "wrong-secret":
      return `wrong secret: the seed node refused our cluster secret, or only one side has one (${f.detail})`;
    case "handshake-refused":
      return `handshake refused by the seed node (${f.detail})`;
    case "handshake-timeout":
      return `handshake timed out: something listens there but does not answer as a shardkit node (${f.detail})`;
    case "other":
      return `connect failed (${f.detail})`;
  }
}
