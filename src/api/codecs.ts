/**
 * Ready-made codecs for event-sourced entities: `msgpackCodec<T>()` stores events and
 * snapshots of plain data (objects, arrays, strings, numbers, booleans, null, bigint,
 * Uint8Array, Date, Map, Set) with the default msgpack serializer (serializer id 1).
 * Values it cannot encode throw at `encode`; bytes written by another serializer throw a
 * typed CodecMismatchError at `decode`, so recovery fails visibly instead of guessing.
 */
import type { EventCodec } from "../actor/event-sourced/event-sourced-behavior.js";
import { ShardkitError } from "../base/errors.js";
import {
  currentManifest,
  type EvolutionSpec,
  ManifestCorruptError,
  ManifestMissingError,
  resolveEvolution,
  UnknownManifestError,
  upcast,
} from "../protocol/evolution.js";
import { createMsgpackSerializer } from "../protocol/msgpack-serializer.js";

/** Stored bytes were written by a serializer this codec does not read. */
export class CodecMismatchError extends ShardkitError {
  constructor(expected: number, got: number) {
    super("CODEC_MISMATCH", `stored value has serializer id ${got}; this codec reads ${expected}`, {
      expected,
      got,
    });
  }
}

let shared: ReturnType<typeof createMsgpackSerializer> | undefined;

/** A msgpack codec for events or snapshot states of plain data. */
export function msgpackCodec<T>(): EventCodec<T> {
  shared ??= createMsgpackSerializer();
  const s = shared;
  return {
    encode: (value) => ({ serializerId: s.id, bytes: s.toBinary(value) }),
    decode: (serializerId, bytes) => {
      if (serializerId !== s.id) throw new CodecMismatchError(s.id, serializerId);
      return s.fromBinary(bytes) as T;
    },
  };
}

/**
 * Serializer id of values written by {@link manifestCodec}: msgpack of
 * `[manifest, version, value]`.
 */
export const MANIFEST_CODEC_SERIALIZER_ID = 2;

/** Options of {@link manifestCodec}. */
export interface ManifestCodecOptions<T> extends EvolutionSpec {
  /**
   * The manifest (type name) of a value to write. Default: the value's string `type`
   * field; a value without one is refused at `encode`.
   */
  readonly manifest?: (value: T) => string;
  /**
   * The manifest and version of values written before this codec was used (by
   * `msgpackCodec`, serializer id 1); without it such values are refused.
   */
  readonly legacy?: { readonly manifest: string; readonly version: number };
}

function typeField(value: unknown): string {
  const t = (value as { type?: unknown } | null)?.type;
  if (typeof t !== "string") throw new ManifestMissingError();
  return t;
}

/**
 * A msgpack codec that writes every value with its manifest (type name) and version, and
 * on reading maps renamed manifests through `aliases` and lifts old versions through
 * `upcasters` (see docs/evolution.md). Use it for events and snapshots whose shape will
 * change across releases.
 * @throws ConfigError at creation on an inconsistent evolution spec.
 */
export function manifestCodec<T>(options: ManifestCodecOptions<T>): EventCodec<T> {
  const evolution = resolveEvolution(options, "manifestCodec");
  const manifestOf = options.manifest ?? typeField;
  const legacy = options.legacy;
  if (legacy !== undefined) currentManifest(evolution, legacy.manifest);
  shared ??= createMsgpackSerializer();
  const s = shared;
  return {
    encode: (value) => {
      const manifest = manifestOf(value);
      const version = evolution.versions.get(manifest);
      if (version === undefined)
        throw new UnknownManifestError(manifest, [...evolution.versions.keys()]);
      return {
        serializerId: MANIFEST_CODEC_SERIALIZER_ID,
        bytes: s.toBinary([manifest, version, value]),
      };
    },
    decode: (serializerId, bytes) => {
      if (serializerId === MANIFEST_CODEC_SERIALIZER_ID) {
        const stored = s.fromBinary(bytes);
        if (
          !Array.isArray(stored) ||
          stored.length !== 3 ||
          typeof stored[0] !== "string" ||
          typeof stored[1] !== "number"
        )
          throw new ManifestCorruptError(
            Array.isArray(stored) ? `${stored.length} items` : typeof stored,
          );
        return upcast(evolution, stored[0], stored[1], stored[2]).value as T;
      }
      if (serializerId === s.id && legacy !== undefined)
        return upcast(evolution, legacy.manifest, legacy.version, s.fromBinary(bytes)).value as T;
      throw new CodecMismatchError(MANIFEST_CODEC_SERIALIZER_ID, serializerId);
    },
  };
}
