/**
 * TLS settings of the TCP transport: validation, and the node:tls options derived from
 * them for both roles.
 *
 * Invariants:
 * - TLS is always mutual: the server requests a client certificate and (unless
 *   `rejectUnauthorized` is false) rejects peers whose certificate does not chain to
 *   `ca`; the client verifies the server the same way, plus its name.
 * - The PEM material is loaded once, at construction, so a bad CA/cert/key (or a key
 *   that does not match its cert) fails fast with a ConfigError instead of on the first
 *   connection; clients reuse that one SecureContext.
 * - Error messages never contain key material: values are described by kind only.
 *
 * Why a shared CA instead of per-node pinning: cluster nodes come and go; a private CA is
 * how Akka, Orleans and etcd secure a cluster, and rotation works by concatenating the
 * old and new CA certificates in one `ca` PEM string.
 */
import { Buffer } from "node:buffer";
import { createSecureContext, type SecureContext, type TlsOptions } from "node:tls";
import { ConfigError } from "../../base/errors.js";

/** PEM text, or its bytes. */
export type PemInput = string | Uint8Array;

/** TLS options of {@link TcpTransportOptions}. */
export interface TcpTransportTlsOptions {
  /** PEM certificate(s) of the cluster CA; several may be concatenated (rotation). */
  readonly ca: PemInput;
  /** PEM certificate of this node (chain allowed), used as server and as client cert. */
  readonly cert: PemInput;
  /** PEM private key of `cert`. */
  readonly key: PemInput;
  /** Reject peers whose certificate does not verify. Default true; false only for tests. */
  readonly rejectUnauthorized?: boolean;
  /**
   * Name the client expects in the server certificate (and sends as SNI) instead of the
   * host it dials, e.g. one shared DNS SAN for every node. Default: the dialed host.
   */
  readonly servername?: string;
}

/** Validated TLS settings. */
export interface ResolvedTls {
  readonly ca: Buffer | string;
  readonly cert: Buffer | string;
  readonly key: Buffer | string;
  readonly rejectUnauthorized: boolean;
  readonly servername: string | undefined;
  /** Loaded once; shared by every outbound connection. */
  readonly clientContext: SecureContext;
}

const TLS_KEYS = ["ca", "cert", "key", "rejectUnauthorized", "servername"] as const;

/** Validates `tls` (undefined = plain TCP); throws ConfigError naming `transport.tls.*`. */
export function resolveTls(tls: unknown): ResolvedTls | undefined {
  if (tls === undefined) return undefined;
  if (typeof tls !== "object" || tls === null)
    throw new ConfigError("transport.tls", kindOf(tls), "an object with ca, cert and key");
  const input = tls as Record<string, unknown>;
  rejectUnknownKeys(input);
  const ca = pem("transport.tls.ca", input.ca);
  const cert = pem("transport.tls.cert", input.cert);
  const key = pem("transport.tls.key", input.key);
  const rejectUnauthorized = optionalBool("transport.tls.rejectUnauthorized", input);
  const servername = optionalServername(input.servername);
  const clientContext = loadContext(ca, cert, key);
  return { ca, cert, key, rejectUnauthorized, servername, clientContext };
}

/** node:tls server options: mutual TLS, handshake bounded by `handshakeTimeoutMs`. */
export function tlsServerOptions(tls: ResolvedTls, handshakeTimeoutMs: number): TlsOptions {
  return {
    ca: tls.ca,
    cert: tls.cert,
    key: tls.key,
    requestCert: true,
    rejectUnauthorized: tls.rejectUnauthorized,
    handshakeTimeout: handshakeTimeoutMs,
  };
}

function rejectUnknownKeys(input: Record<string, unknown>): void {
  for (const key of Object.keys(input)) {
    if (!(TLS_KEYS as readonly string[]).includes(key))
      throw new ConfigError(`transport.tls.${key}`, "(unknown)", `one of ${TLS_KEYS.join(", ")}`);
  }
}

function pem(key: string, value: unknown): Buffer | string {
  if (typeof value === "string" && value.length > 0) return value;
  if (value instanceof Uint8Array && value.byteLength > 0)
    return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  throw new ConfigError(key, kindOf(value), "a non-empty PEM string or Uint8Array");
}

function optionalBool(key: string, input: Record<string, unknown>): boolean {
  const value = input.rejectUnauthorized;
  if (value === undefined) return true;
  if (typeof value !== "boolean") throw new ConfigError(key, value, "true or false");
  return value;
}

function optionalServername(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.length === 0)
    throw new ConfigError("transport.tls.servername", value, "a non-empty host name");
  return value;
}

function loadContext(
  ca: Buffer | string,
  cert: Buffer | string,
  key: Buffer | string,
): SecureContext {
  try {
    return createSecureContext({ ca, cert, key });
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new ConfigError("transport.tls", "(PEM material)", `loadable PEM ca/cert/key (${why})`);
  }
}

/** Describes a value without revealing it (it may be a private key). */
function kindOf(value: unknown): string {
  if (typeof value === "string") return value.length === 0 ? "(empty string)" : "(string)";
  if (value instanceof Uint8Array) return `(${value.byteLength} bytes)`;
  if (value === null) return "(null)";
  return `(${typeof value})`;
}
