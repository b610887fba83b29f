/**
 * A user serializer for remote messages that carries a type manifest: several message
 * types share one serializer id, each written as `[u16 manifest length][manifest utf-8]
 * [payload]`. On arrival the manifest picks the type (an old name maps through
 * `aliases`); a manifest this member does not know fails with UnknownManifestError,
 * which the remoting layer turns into a dead letter (reason "unknown-manifest") instead
 * of dropping the connection. See docs/evolution.md.
 */
import { ConfigError } from "../base/errors.js";
import { SerializationError } from "./errors.js";
import { ManifestCorruptError, UnknownManifestError } from "./evolution.js";
import type { Serializer, SerializerBinding } from "./serialization.js";

/** One message type of a manifest serializer. */
export interface ManifestType<T> {
  /** The type's name on the wire (1..200 UTF-8 bytes). */
  readonly manifest: string;
  /** Whether a value to send is of this type. */
  readonly matches: (value: unknown) => boolean;
  toBinary(value: T): Uint8Array;
  fromBinary(bytes: Uint8Array): T;
}

/** Options of {@link manifestSerializer}. */
export interface ManifestSerializerOptions {
  /** The serializer id (user range, >= 100). */
  readonly id: number;
  readonly name: string;
  readonly types: readonly ManifestType<unknown>[];
  /** Former manifest -> current manifest, for renamed types. */
  readonly aliases?: Readonly<Record<string, string>>;
}

/** Longest manifest, in UTF-8 bytes. */
export const MANIFEST_BYTES_MAX = 200;

/** A serializer and the binding to register it with (`registry.register(s, binding)`). */
export interface ManifestSerializer {
  readonly serializer: Serializer;
  readonly binding: SerializerBinding;
}

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Builds a manifest-carrying serializer.
 * @throws ConfigError on a duplicate or over-long manifest or an alias onto an unknown one.
 */
export function manifestSerializer(options: ManifestSerializerOptions): ManifestSerializer {
  const byManifest = new Map<string, ManifestType<unknown>>();
  const encoded = new Map<ManifestType<unknown>, Uint8Array>();
  for (const [i, t] of options.types.entries()) {
    const bytes = utf8.encode(t.manifest);
    if (bytes.length === 0 || bytes.length > MANIFEST_BYTES_MAX)
      throw new ConfigError(
        `${options.name}.types[${i}].manifest`,
        t.manifest,
        `1..${MANIFEST_BYTES_MAX} UTF-8 bytes`,
      );
    if (byManifest.has(t.manifest))
      throw new ConfigError(
        `${options.name}.types[${i}].manifest`,
        t.manifest,
        "a unique manifest",
      );
    byManifest.set(t.manifest, t);
    encoded.set(t, bytes);
  }
  const aliases = new Map<string, string>();
  for (const [old, current] of Object.entries(options.aliases ?? {})) {
    if (!byManifest.has(current))
      throw new ConfigError(
        `${options.name}.aliases.${old}`,
        current,
        "a manifest of this serializer",
      );
    aliases.set(old, current);
  }
  const typeOf = (value: unknown): ManifestType<unknown> => {
    for (const t of byManifest.values()) if (t.matches(value)) return t;
    throw new SerializationError(`${options.name}: no type matches the value`);
  };
  const serializer: Serializer = {
    id: options.id,
    name: options.name,
    toBinary(value) {
      const t = typeOf(value);
      const m = encoded.get(t) as Uint8Array;
      const payload = t.toBinary(value);
      const out = new Uint8Array(2 + m.length + payload.length);
      out[0] = m.length >>> 8;
      out[1] = m.length & 0xff;
      out.set(m, 2);
      out.set(payload, 2 + m.length);
      return out;
    },
    fromBinary(bytes) {
      if (bytes.length < 2) throw new ManifestCorruptError(`${options.name}: truncated manifest`);
      const len = ((bytes[0] as number) << 8) | (bytes[1] as number);
      if (len === 0 || len > MANIFEST_BYTES_MAX || 2 + len > bytes.length)
        throw new ManifestCorruptError(`${options.name}: invalid manifest length ${len}`);
      const stored = fromUtf8.decode(bytes.subarray(2, 2 + len));
      const t = byManifest.get(aliases.get(stored) ?? stored);
      if (t === undefined) throw new UnknownManifestError(stored, [...byManifest.keys()]);
      return t.fromBinary(bytes.subarray(2 + len));
    },
  };
  return {
    serializer,
    binding: { match: (v) => [...byManifest.values()].some((t) => t.matches(v)) },
  };
}
