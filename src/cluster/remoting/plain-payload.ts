/**
 * Control and system payloads are plain objects encoded with the default (msgpackr)
 * serializer. Decoding network bytes never throws: anything that is not a plain object
 * comes back as undefined for the caller to count as bad input.
 */
import type { SerializerRegistry } from "../../protocol/serializer-registry.js";

export function encodePlain(registry: SerializerRegistry, value: object): Uint8Array {
  return registry.defaultSerializer.toBinary(value);
}

export function decodePlainRecord(
  registry: SerializerRegistry,
  bytes: Uint8Array,
): Record<string, unknown> | undefined {
  let v: unknown;
  try {
    v = registry.defaultSerializer.fromBinary(bytes);
  } catch {
    return undefined;
  }
  return typeof v === "object" && v !== null && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : undefined;
}
