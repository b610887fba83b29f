/**
 * Text forms of node addresses and actor paths on the wire.
 * - node: `<system>@<host>:<port>` (the handshake carries the uid separately);
 * - actor: `/<elements joined by '/'>#<uid>`, e.g. `/user/cart-42#17`.
 * Parsing returns undefined for anything malformed (input from the network).
 */
export interface WireActorPath {
  readonly elements: readonly string[];
  readonly uid: number;
}

export function formatActorPath(elements: readonly string[], uid: number): string {
  return `/${elements.join("/")}#${uid}`;
}

export function parseActorPath(text: string): WireActorPath | undefined {
  if (!text.startsWith("/")) return undefined;
  const hash = text.lastIndexOf("#");
  if (hash < 0) return undefined;
  const uid = Number(text.slice(hash + 1));
  if (!Number.isSafeInteger(uid) || uid < 0) return undefined;
  const elements = text.slice(1, hash).split("/");
  if (elements.some((e) => e.length === 0)) return undefined;
  return { elements, uid };
}

/** The path prefix of an ask's reply target: `/temp/$ask<id>#<id>` (ask.ts names it). */
export const ASK_PATH_PREFIX = "/temp/$ask";

/**
 * The id of an ask's reply-target path in its canonical form `/temp/$ask<id>#<id>` (the
 * same decimal digits twice, no leading zero, a safe integer), else -1. Every ask that
 * crosses the network carries one, and every reply is addressed to one: this reads it
 * without splitting the path or allocating.
 */
export function askIdOfPath(text: string): number {
  const n = text.length;
  const start = ASK_PATH_PREFIX.length;
  if (n < start + 3 || !text.startsWith(ASK_PATH_PREFIX)) return -1;
  let id = 0;
  let i = start;
  for (; i < n; i++) {
    const c = text.charCodeAt(i) - 48;
    if (c < 0 || c > 9) break;
    id = id * 10 + c;
  }
  const digits = i - start;
  if (digits === 0 || digits > 16 || text.charCodeAt(start) === 48 || i >= n) return -1;
  if (id > Number.MAX_SAFE_INTEGER) return -1;
  if (text.charCodeAt(i) !== 35 || n !== i + 1 + digits) return -1; // "#" and as many digits
  for (let j = 0; j < digits; j++)
    if (text.charCodeAt(i + 1 + j) !== text.charCodeAt(start + j)) return -1;
  return id;
}

export interface WireNode {
  readonly systemName: string;
  readonly host: string;
  readonly port: number;
  /** `host:port`, the association key. */
  readonly hostPort: string;
}

export function formatNode(systemName: string, host: string, port: number): string {
  return `${systemName}@${host}:${port}`;
}

export function parseNode(text: string): WireNode | undefined {
  const at = text.indexOf("@");
  const colon = text.lastIndexOf(":");
  if (at <= 0 || colon <= at + 1) return undefined;
  const port = Number(text.slice(colon + 1));
  if (!Number.isInteger(port) || port < 1 || port > 65_535) return undefined;
  const host = text.slice(at + 1, colon);
  return { systemName: text.slice(0, at), host, port, hostPort: `${host}:${port}` };
}
