/**
 * Loads a reference-vector file from test/fixtures/reference-vectors (copied unchanged
 * from /work/shared/reference-vectors; see docs/conformance.md). The files are plain
 * JSON; each adapter declares the shape of the case kinds it consumes.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";

const DIR = resolve(import.meta.dirname, "../fixtures/reference-vectors");

export interface VectorFile<C> {
  readonly source: { readonly repository: string; readonly commit: string };
  readonly semantics: Readonly<Record<string, string>>;
  readonly cases: readonly C[];
}

export interface BaseCase {
  readonly name: string;
  readonly kind: string;
}

export function loadVectors<C extends BaseCase>(file: string): VectorFile<C> {
  return JSON.parse(readFileSync(resolve(DIR, file), "utf8")) as VectorFile<C>;
}

/** Cases of one kind, narrowed to that kind's type. */
export function casesOfKind<C extends BaseCase, K extends C["kind"]>(
  cases: readonly C[],
  kind: K,
): Extract<C, { kind: K }>[] {
  return cases.filter((c): c is Extract<C, { kind: K }> => c.kind === kind);
}

/** Inclusive tolerance check used by the vectors. */
export function within(actual: number, value: number, tolerance: number): boolean {
  return Math.abs(actual - value) <= tolerance;
}
