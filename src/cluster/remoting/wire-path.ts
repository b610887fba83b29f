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

export { ASK_PATH_PREFIX, askIdOfPath } from "../../protocol/ask-path.js";

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
