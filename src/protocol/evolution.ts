/**
 * Evolution of stored values: manifests, versions, upcasters and aliases, as pure
 * functions. A stored value carries a manifest (its type name) and the version of that
 * type it was written with. On reading, an old name is mapped to the current one through
 * the alias table, then the value is lifted from its version to the current one by a
 * chain of upcasters, one step at a time. See docs/evolution.md.
 */
import { ConfigError, ShardkitError } from "../base/errors.js";

/** Lifts a value of one manifest from version `from` to version `to` (> from). */
export interface Upcaster {
  /** The (current) manifest this step applies to. */
  readonly manifest: string;
  readonly from: number;
  readonly to: number;
  up(old: unknown): unknown;
}

/** What the current code knows about the manifests it reads and writes. */
export interface EvolutionSpec {
  /** Current version of every manifest (versions start at 1). */
  readonly versions: Readonly<Record<string, number>>;
  readonly upcasters?: readonly Upcaster[];
  /** Former manifest name -> current manifest name (renamed types). */
  readonly aliases?: Readonly<Record<string, string>>;
}

/** A stored value's manifest is neither a current manifest nor an alias of one. */
export class UnknownManifestError extends ShardkitError {
  constructor(manifest: string, known: readonly string[]) {
    super(
      "UNKNOWN_MANIFEST",
      `unknown manifest "${manifest}" (this version knows ${known.map((k) => `"${k}"`).join(", ")}): add it, or an alias to its new name`,
      { manifest, known },
    );
  }
}

/** A stored value was written by a newer version of the code than this one. */
export class ManifestVersionError extends ShardkitError {
  constructor(manifest: string, version: number, current: number) {
    super(
      "MANIFEST_VERSION_TOO_NEW",
      `manifest "${manifest}" version ${version} is newer than this code's version ${current}: it was written by a newer build`,
      { manifest, version, current },
    );
  }
}

/** A value to write has no manifest (no string `type` field and no `manifest` option). */
export class ManifestMissingError extends ShardkitError {
  constructor() {
    super(
      "MANIFEST_MISSING",
      "value has no string `type` field to use as its manifest; pass manifestCodec({ manifest })",
    );
  }
}

/** Bytes that should carry a manifest do not hold a well-formed one. */
export class ManifestCorruptError extends ShardkitError {
  constructor(detail: string) {
    super("MANIFEST_CORRUPT", `malformed manifest: ${detail}`, { detail });
  }
}

/** The resolved, validated form of an {@link EvolutionSpec}. */
export interface Evolution {
  readonly versions: ReadonlyMap<string, number>;
  readonly aliases: ReadonlyMap<string, string>;
  /** Per manifest, the upcaster that starts at each version. */
  readonly steps: ReadonlyMap<string, ReadonlyMap<number, Upcaster>>;
}

function isVersion(v: unknown): v is number {
  return typeof v === "number" && Number.isInteger(v) && v >= 1;
}

/**
 * Checks a spec: versions are integers >= 1; aliases name current manifests and are not
 * current names themselves; every upcaster names a current manifest, goes forward, does
 * not overlap another, and each manifest's steps form one chain from its oldest version
 * to its current one with no gap.
 * @throws ConfigError naming the offending key.
 */
export function resolveEvolution(spec: EvolutionSpec, key = "evolution"): Evolution {
  const versions = new Map<string, number>();
  for (const [m, v] of Object.entries(spec.versions)) {
    if (!isVersion(v)) throw new ConfigError(`${key}.versions.${m}`, v, "an integer >= 1");
    versions.set(m, v);
  }
  if (versions.size === 0)
    throw new ConfigError(`${key}.versions`, spec.versions, "at least one manifest");
  const aliases = new Map<string, string>();
  for (const [old, current] of Object.entries(spec.aliases ?? {})) {
    if (versions.has(old))
      throw new ConfigError(`${key}.aliases.${old}`, current, "a former name, not a current one");
    if (!versions.has(current))
      throw new ConfigError(`${key}.aliases.${old}`, current, "a current manifest name");
    aliases.set(old, current);
  }
  const steps = new Map<string, Map<number, Upcaster>>();
  for (const [i, u] of (spec.upcasters ?? []).entries()) {
    const at = `${key}.upcasters[${i}]`;
    const current = versions.get(u.manifest);
    if (current === undefined)
      throw new ConfigError(`${at}.manifest`, u.manifest, "a current manifest name");
    if (!isVersion(u.from) || !isVersion(u.to) || u.to <= u.from)
      throw new ConfigError(`${at}`, `${u.from}->${u.to}`, "versions >= 1 with to > from");
    if (u.to > current)
      throw new ConfigError(`${at}.to`, u.to, `at most the current version ${current}`);
    let byFrom = steps.get(u.manifest);
    if (byFrom === undefined) {
      byFrom = new Map();
      steps.set(u.manifest, byFrom);
    }
    if (byFrom.has(u.from))
      throw new ConfigError(`${at}.from`, u.from, "one upcaster per manifest and version");
    byFrom.set(u.from, u);
  }
  for (const [m, byFrom] of steps) {
    // Walk from the oldest step: every step must lead to the next, up to the current version.
    const oldest = Math.min(...byFrom.keys());
    let v = oldest;
    let used = 0;
    while (v < (versions.get(m) as number)) {
      const step = byFrom.get(v);
      if (step === undefined)
        throw new ConfigError(
          `${key}.upcasters`,
          `${m}@${v}`,
          `a step from version ${v} of "${m}" (its chain has a gap)`,
        );
      v = step.to;
      used++;
    }
    if (used !== byFrom.size)
      throw new ConfigError(`${key}.upcasters`, m, `steps of "${m}" that form one chain`);
  }
  return { versions, aliases, steps };
}

/** The current name of a stored manifest. @throws UnknownManifestError */
export function currentManifest(evolution: Evolution, stored: string): string {
  if (evolution.versions.has(stored)) return stored;
  const renamed = evolution.aliases.get(stored);
  if (renamed !== undefined) return renamed;
  throw new UnknownManifestError(stored, [...evolution.versions.keys()]);
}

/**
 * Lifts a stored value to the current version of its (current) manifest.
 * @throws UnknownManifestError, ManifestVersionError, or ConfigError when no chain of
 * upcasters leads from the stored version to the current one.
 */
export function upcast(
  evolution: Evolution,
  storedManifest: string,
  storedVersion: number,
  value: unknown,
): { readonly manifest: string; readonly value: unknown } {
  const manifest = currentManifest(evolution, storedManifest);
  const current = evolution.versions.get(manifest) as number;
  if (storedVersion > current) throw new ManifestVersionError(manifest, storedVersion, current);
  const byFrom = evolution.steps.get(manifest);
  let v = storedVersion;
  let out = value;
  while (v < current) {
    const step = byFrom?.get(v);
    if (step === undefined)
      throw new ConfigError(
        `upcasters`,
        `${manifest}@${v}`,
        `an upcaster from version ${v} of "${manifest}" (stored values of that version exist)`,
      );
    out = step.up(out);
    v = step.to;
  }
  return { manifest, value: out };
}
