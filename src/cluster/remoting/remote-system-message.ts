/**
 * Payloads of remote system messages (remote death watch), carried in SYSTEM frames.
 * Encoded with the default (msgpackr) serializer; decoding validates every field since
 * the bytes come from the network.
 */
import type { SerializerRegistry } from "../../protocol/serializer-registry.js";
import { decodePlainRecord, encodePlain } from "./plain-payload.js";

export type RemoteSystemMessage =
  | { readonly t: "watch"; readonly watchee: string; readonly watcher: string }
  | { readonly t: "unwatch"; readonly watchee: string; readonly watcher: string }
  | {
      readonly t: "terminated";
      readonly watchee: string;
      readonly watcher: string;
      readonly failed: boolean;
    };

export function encodeRemoteSystemMessage(
  registry: SerializerRegistry,
  m: RemoteSystemMessage,
): Uint8Array {
  return encodePlain(registry, m);
}

export function decodeRemoteSystemMessage(
  registry: SerializerRegistry,
  bytes: Uint8Array,
): RemoteSystemMessage | undefined {
  const o = decodePlainRecord(registry, bytes);
  if (o === undefined) return undefined;
  if (typeof o.watchee !== "string" || typeof o.watcher !== "string") return undefined;
  if (o.t === "watch" || o.t === "unwatch")
    return { t: o.t, watchee: o.watchee, watcher: o.watcher };
  if (o.t === "terminated" && typeof o.failed === "boolean")
    return { t: "terminated", watchee: o.watchee, watcher: o.watcher, failed: o.failed };
  return undefined;
}
