/**
 * Maps why a connect attempt failed to a stable TransportError reason.
 *
 * The reason depends on the phase the attempt had reached, not on message text
 * (docs/architecture.md, house rule 3): once TCP is established, any failure before the
 * connection is handed out (an error, the peer hanging up, a certificate problem) is "tls",
 * because that phase exists only to run the handshake and let the server verify us. A
 * timeout is always "connect-timeout", whatever the phase.
 *
 * Kept pure so the timeout mapping is unit-tested even though a TCP-level connect
 * timeout cannot be provoked reliably on loopback.
 */
import { TransportError } from "../../base/errors.js";
import type { HostPort } from "../../ports/transport.js";

/**
 * How far a connect attempt got: "tcp" before the TCP handshake completes,
 * "tls-handshake" during the TLS handshake, "tls-verify" after it (TLS 1.3) while
 * waiting for proof that the server accepted our certificate.
 */
export type ConnectPhase = "tcp" | "tls-handshake" | "tls-verify";

/** What ended the attempt: our timer, the socket closing without an error, or an error. */
export type ConnectFailureCause =
  | { readonly type: "timeout"; readonly timeoutMs: number }
  | { readonly type: "hang-up" }
  | { readonly type: "error"; readonly error: Error }
  | { readonly type: "aborted" };

/** Stable reason for a failed connect attempt. */
export function connectFailureReason(
  phase: ConnectPhase,
  cause: ConnectFailureCause,
): TransportError["reason"] {
  switch (cause.type) {
    case "timeout":
      return "connect-timeout";
    case "aborted":
      return "closed";
    case "hang-up":
      return phase === "tcp" ? "other" : "tls";
    case "error":
      return phase === "tcp" ? tcpErrorReason(cause.error) : "tls";
  }
}

/** The TransportError a failed connect attempt rejects with. */
export function connectFailure(
  address: HostPort,
  phase: ConnectPhase,
  cause: ConnectFailureCause,
): TransportError {
  const reason = connectFailureReason(phase, cause);
  const target = `${address.host}:${address.port}`;
  const fields = { host: address.host, port: address.port, phase };
  switch (cause.type) {
    case "timeout":
      return new TransportError(
        reason,
        `connect to ${target} timed out after ${cause.timeoutMs} ms`,
        {
          ...fields,
          timeoutMs: cause.timeoutMs,
        },
      );
    case "aborted":
      return new TransportError(reason, `connect to ${target} aborted: transport closed`, fields);
    case "hang-up":
      return new TransportError(reason, `connect to ${target}: peer hung up (${phase})`, fields);
    case "error":
      return new TransportError(reason, `connect to ${target} failed: ${cause.error.message}`, {
        ...fields,
        errorCode: errorCode(cause.error),
        cause: cause.error,
      });
  }
}

/** The TransportError a failed listen rejects with. */
export function listenFailure(address: HostPort, error: Error): TransportError {
  return new TransportError(
    "listen-failed",
    `listen on ${address.host}:${address.port} failed: ${error.message}`,
    { host: address.host, port: address.port, errorCode: errorCode(error), cause: error },
  );
}

/** The `code` of a Node system or TLS error, if any. */
export function errorCode(error: Error): string | undefined {
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" ? code : undefined;
}

function tcpErrorReason(error: Error): TransportError["reason"] {
  switch (errorCode(error)) {
    case "ECONNREFUSED":
      return "connect-refused";
    case "ETIMEDOUT":
      return "connect-timeout";
    default:
      return "other";
  }
}
