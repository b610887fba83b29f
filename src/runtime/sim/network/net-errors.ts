/**
 * The TransportErrors the simulated network produces. Callers branch on `reason` (and,
 * for injected faults, on `fields.fault`), never on the message text.
 */
import { TransportError } from "../../../base/errors.js";
import type { CloseReason, HostPort } from "../../../ports/transport.js";

/** Why an established connection was reset. */
export type ResetCause = "segment-lost" | "peer-reset" | "partition-timeout";

/** `host:port`. */
export function formatAddress(address: HostPort): string {
  return `${address.host}:${address.port}`;
}

/** Nobody listens on the address (the peer's kernel answered with RST). */
export function connectRefused(target: HostPort): TransportError {
  return new TransportError("connect-refused", `connection to ${formatAddress(target)} refused`, {
    address: formatAddress(target),
  });
}

/** No answer within the connect timeout (partition, unknown host). */
export function connectTimeout(target: HostPort, timeoutMs: number): TransportError {
  return new TransportError(
    "connect-timeout",
    `connect to ${formatAddress(target)} timed out after ${timeoutMs} ms`,
    { address: formatAddress(target), timeoutMs },
  );
}

/** An injected handshake failure (LinkConfig.connectFailProbability). */
export function handshakeReset(target: HostPort): TransportError {
  return new TransportError("other", `connection to ${formatAddress(target)} reset in handshake`, {
    address: formatAddress(target),
    fault: "handshake-reset",
  });
}

/** The transport was closed (or its process crashed) before or during the call. */
export function transportClosed(nodeName: string, what: string): TransportError {
  return new TransportError("closed", `transport of ${nodeName} is closed: cannot ${what}`, {
    node: nodeName,
  });
}

/** A listener could not be bound. */
export function listenFailed(address: HostPort, why: string): TransportError {
  return new TransportError("listen-failed", `cannot listen on ${formatAddress(address)}: ${why}`, {
    address: formatAddress(address),
  });
}

/** The error of a connection closed by a reset or timeout. */
export function connectionReset(connection: number, cause: ResetCause): TransportError {
  const what = cause === "partition-timeout" ? "timed out" : "reset";
  return new TransportError("other", `connection ${connection} ${what} (${cause})`, {
    connection,
    fault: cause,
  });
}

/** Short text of a close reason for the trace. */
export function describeCloseReason(reason: CloseReason): string {
  return reason.type === "error" ? `error: ${reason.error.message}` : reason.type;
}
